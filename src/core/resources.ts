// What the agent knows of its resources: learnt at start through operation 2 (subtype restrictions,
// lifetimes), checked against the configuration, and used to validate samples and parse commands.
import type { SampleValue } from './host';
import type { FeedClient } from './client';
import { FeedError } from './errors';
import type { Restriction } from './validate';
import { compileRestriction, isBinarySubtype, numericValue } from './validate';
import type { Resource } from './wire';

/** A configured id that the service does not know for this device. */
export class MissingResourceError extends Error {
  constructor(readonly missing: number[]) {
    super('resource' + (missing.length > 1 ? 's ' : ' ') + missing.join(', ') + (missing.length > 1 ? ' do' : ' does') +
      ' not exist on this device (check the resource ids and the public key)');
  }

  // Not `this.name = …`: that assignment throws where Error.prototype is frozen (see FeedError).
  override get name(): string {
    return 'MissingResourceError';
  }
}

/** What the agent knows of one configured resource. */
export interface Known {
  /**
   * Numbers in [lo, hi] need no closer look before they are queued (the agent's fast lane); lo > hi while
   * every sample of the resource does: the agent takes none, or the subtype has a regex.
   */
  lo_: number;
  hi_: number;
  /** The queue's tag for the resource's numbers (`SampleQueue.numberTag`); -1 without one. */
  tag_: number;
  /** Absent until the lookup succeeded, null when the subtype's regex is unusable. */
  restriction_: Restriction | null | undefined;
  binary_: boolean;
  /** The service says the resource is gone (vanished.ts): its samples are set aside at intake. */
  gone_: boolean;
}

export class Resources {
  /** Undefined for an id that is not configured; a null-prototype object, so no id meets an inherited property. */
  readonly byId_: Record<number, Known> = Object.create(null);
  /** Shortest `lifetime` among the resources, in minutes; 0 until known. */
  shortestLifetimeMin_ = 0;
  private open_ = false;

  constructor(readonly ids_: readonly number[], tag: (resource: number) => number) {
    for (const id of ids_) this.byId_[id] = { lo_: Infinity, hi_: -Infinity, tag_: tag(id), restriction_: undefined, binary_: false, gone_: false };
  }

  /** Opens the fast lane of every resource whose numbers need only a range check, or shuts them all. */
  admit_(open: boolean): void {
    this.open_ = open;
    for (const id of this.ids_) {
      const known = this.byId_[id];
      const r = known.restriction_;
      const shut = !open || known.tag_ < 0 || known.gone_ || (r && r.regex !== null);
      // Without a known restriction a number needs only to be finite: ±MAX_VALUE rules out the rest.
      known.lo_ = shut ? Infinity : r ? r.begin : -Number.MAX_VALUE;
      known.hi_ = shut ? -Infinity : r ? r.end : Number.MAX_VALUE;
    }
  }

  /**
   * Reads every configured resource (operation 2, not silent: it also counts as presence) and resolves
   * with the records. Rejects with MissingResourceError naming every unknown id, or with the FeedError of
   * the failed read.
   */
  async lookup_(client: FeedClient, warn: (message: string) => void): Promise<Resource[]> {
    let records: Resource[];
    try {
      records = await client.getResources(this.ids_);
    } catch (e) {
      if (e instanceof FeedError && e.status === 404) throw new MissingResourceError(await this.findMissing_(client));
      throw e;
    }
    let shortest = 0;
    for (const record of records) {
      let restriction: Restriction | null = null;
      try {
        restriction = compileRestriction(record.subtype);
      } catch {
        warn('resource ' + record.id_resource + ': its subtype regex does not compile; values are not checked before sending');
      }
      const known = this.byId_[record.id_resource];
      known.restriction_ = restriction;
      known.binary_ = isBinarySubtype(record.subtype);
      if (record.lifetime > 0 && (shortest === 0 || record.lifetime < shortest)) shortest = record.lifetime;
    }
    this.shortestLifetimeMin_ = shortest;
    return records;
  }

  /** Marks a resource gone or back; a gone one's samples take the full path, which sets them aside. */
  setGone_(id: number, gone: boolean): void {
    this.byId_[id].gone_ = gone;
    this.admit_(this.open_);
  }

  /** A command's `raw_data` as its subtype means it: a string for regex subtypes, a boolean for 0..1, else a number. */
  parseCommand_(resource: number, raw: string): SampleValue {
    const known = this.byId_[resource];
    if (known?.restriction_ && known.restriction_.regex !== null) return raw;
    const n = numericValue(raw);
    if (n !== n) return raw;
    return known?.binary_ ? n !== 0 : n;
  }

  /** After a 404 on the whole list: which ids are unknown (one silent read each; only at start). */
  private async findMissing_(client: FeedClient): Promise<number[]> {
    const missing: number[] = [];
    for (const id of this.ids_) {
      try {
        await client.getResource(id, { silent: true });
      } catch (e) {
        if (e instanceof FeedError && e.status === 404) missing.push(id);
        else throw e;
      }
    }
    return missing;
  }
}
