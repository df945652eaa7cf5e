// What the agent knows of its resources: learnt at start through operation 2 (subtype restrictions,
// lifetimes), checked against the configuration, and used to validate samples and parse commands.
import type { SampleValue } from '../host/host';
import type { FeedClient } from '../wire/client';
import type { SampleQueue } from '../queue/queue';
import { FeedError } from '../wire/errors';
import type { Restriction } from '../wire/validate';
import { compileRestriction, isBinarySubtype, numericValue } from '../wire/validate';
import type { Resource } from '../wire/wire';

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
  lo: number;
  hi: number;
  /** The queue's tag for the resource's numbers (`SampleQueue.numberTag`); -1 without one. */
  tag: number;
  /** Absent until the lookup succeeded, null when the subtype's regex is unusable. */
  restriction: Restriction | null | undefined;
  binary: boolean;
  /** The service says the resource is gone (vanished.ts): its samples are set aside at intake. */
  gone: boolean;
  /** Its report-by-exception rule (report.ts), or -1: every sample is queued. A rule shuts the fast lane. */
  report: number;
}

export class Resources {
  /** Undefined for an id that is not configured; a null-prototype object, so no id meets an inherited property. */
  readonly byId: Record<number, Known> = Object.create(null);
  /** Shortest `lifetime` among the resources, in minutes; 0 until known. */
  shortestLifetimeMin = 0;
  private open = false;

  /** `queue`: gives each resource its tag; `ruled`: the resources with a report-by-exception rule, in the rules' order. */
  constructor(readonly ids: readonly number[], queue: Pick<SampleQueue, 'numberTag'>, ruled: ArrayLike<number>) {
    for (const id of ids) this.byId[id] = { lo: Infinity, hi: -Infinity, tag: queue.numberTag(id), restriction: undefined, binary: false, gone: false, report: -1 };
    for (let i = 0; i < ruled.length; i++) this.byId[ruled[i]].report = i;
  }

  /** Opens the fast lane of every resource whose numbers need only a range check, or shuts them all. */
  admit(open: boolean): void {
    this.open = open;
    for (const id of this.ids) {
      const known = this.byId[id];
      const r = known.restriction;
      const shut = !open || known.tag < 0 || known.gone || known.report >= 0 || (r && r.regex !== null);
      // Without a known restriction a number needs only to be finite: ±MAX_VALUE rules out the rest.
      known.lo = shut ? Infinity : r ? r.begin : -Number.MAX_VALUE;
      known.hi = shut ? -Infinity : r ? r.end : Number.MAX_VALUE;
    }
  }

  /**
   * Reads every configured resource (operation 2, not silent: it also counts as presence) and resolves
   * with the records. Rejects with MissingResourceError naming every unknown id, or with the FeedError of
   * the failed read.
   */
  async lookup(client: FeedClient, warn: (message: string) => void): Promise<Resource[]> {
    let records: Resource[];
    try {
      records = await client.getResources(this.ids);
    } catch (e) {
      if (e instanceof FeedError && e.status === 404) throw new MissingResourceError(await this.findMissing(client));
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
      const known = this.byId[record.id_resource];
      known.restriction = restriction;
      known.binary = isBinarySubtype(record.subtype);
      if (record.lifetime > 0 && (shortest === 0 || record.lifetime < shortest)) shortest = record.lifetime;
    }
    this.shortestLifetimeMin = shortest;
    // The fast lane's bounds follow the restrictions just learnt.
    this.admit(this.open);
    return records;
  }

  /** Marks a resource gone or back; a gone one's samples take the full path, which sets them aside. */
  setGone(id: number, gone: boolean): void {
    this.byId[id].gone = gone;
    this.admit(this.open);
  }

  /** A command's `raw_data` as its subtype means it: a string for regex subtypes, a boolean for 0..1, else a number. */
  parseCommand(resource: number, raw: string): SampleValue {
    const known = this.byId[resource];
    if (known?.restriction && known.restriction.regex !== null) return raw;
    const n = numericValue(raw);
    if (n !== n) return raw;
    return known?.binary ? n !== 0 : n;
  }

  /** After a 404 on the whole list: which ids are unknown (one silent read each; only at start). */
  private async findMissing(client: FeedClient): Promise<number[]> {
    const missing: number[] = [];
    for (const id of this.ids) {
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
