// What the agent knows of its resources: learnt at start through operation 2 (subtype restrictions,
// lifetimes), checked against the configuration, and used to validate samples and parse commands.
import type { SampleValue } from './host';
import type { FeedClient } from './client';
import { FeedError } from './errors';
import type { Restriction } from './validate';
import { compileRestriction, numericValue } from './validate';
import type { Resource } from './wire';

/** A configured id that the service does not know for this device. */
export class MissingResourceError extends Error {
  constructor(readonly missing: number[]) {
    super('resource' + (missing.length > 1 ? 's ' : ' ') + missing.join(', ') + (missing.length > 1 ? ' do' : ' does') +
      ' not exist on this device (check the resource ids and the public key)');
    this.name = 'MissingResourceError';
  }
}

export class Resources {
  /** Restriction by resource id; absent until the lookup succeeded, null when the subtype's regex is unusable. */
  private readonly restrictions = new Map<number, Restriction | null>();
  private readonly binary = new Set<number>();
  /** Shortest `lifetime` among the resources, in minutes; 0 until known. */
  shortestLifetimeMin = 0;
  known = false;

  constructor(readonly ids: readonly number[]) {}

  restriction(resource: number): Restriction | null | undefined {
    return this.restrictions.get(resource);
  }

  /**
   * Reads every configured resource (operation 2, not silent: it also counts as presence). Rejects with
   * MissingResourceError naming every unknown id, or with the FeedError of the failed read.
   */
  async lookup(client: FeedClient, warn: (message: string) => void): Promise<void> {
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
      this.restrictions.set(record.id_resource, restriction);
      const s = record.subtype;
      if (s.data_restriction_regex === null && s.data_restriction_begin_range === 0 && s.data_restriction_end_range === 1) {
        this.binary.add(record.id_resource);
      }
      if (record.lifetime > 0 && (shortest === 0 || record.lifetime < shortest)) shortest = record.lifetime;
    }
    this.shortestLifetimeMin = shortest;
    this.known = true;
  }

  /** A command's `raw_data` as its subtype means it: a string for regex subtypes, a boolean for 0..1, else a number. */
  parseCommand(resource: number, raw: string): SampleValue {
    const restriction = this.restrictions.get(resource);
    if (restriction && restriction.regex !== null) return raw;
    const n = numericValue(raw);
    if (n !== n) return raw;
    return this.binary.has(resource) ? n !== 0 : n;
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
