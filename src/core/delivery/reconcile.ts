// Reconciliation: after an operation-4 request whose outcome is unknown (a timeout, a reset, a garbled
// answer: FeedError.maybeDelivered), find out whether the service stored the batch before sending it
// again. The interface has no idempotency key, but operation 4 is atomic and stores its elements in
// request order with increasing ids (docs/interface.md), and operation 6 shows each resource's newest feed. So
// the batch's resources are read back (operation 6, silent) and compared with what the agent knew before
// the request (the last id_resource_feed per resource, from the start-up lookup and earlier answers):
//
//   every resource shows a new last feed carrying the batch's last value for it,
//   in the batch's order and at least as far apart as its elements        → stored: the batch leaves
//   no resource shows a new feed (and the service had time to finish)      → not stored: sent again
//   anything else (another writer, a mix, an unknown baseline)             → undecided: sent again
//
// A read-back can only be wrong toward "not stored" (the service stores the batch later still), which
// makes a duplicate, never a loss; "stored" relies on the agent being the only writer of its sensor
// resources, so its actuators' resources (the platform writes commands there) are never decided. Memory is
// fixed: one id and one baseline per resource, in typed arrays sized at start. Which batch is read back,
// and when, is the head's (head.ts); this module keeps the baselines and judges.
import type { FeedClient } from '../wire/client';
import type { InFlight } from '../host/host';
import type { SampleQueue } from '../queue/queue';
import type { State } from './rules';
import { NOT_STORED, STORED, UNDECIDED } from './outcomes';
import { rawData } from '../wire/validate';
import type { CreatedFeed, Feed, Resource } from '../wire/wire';

export interface ReconcilerParts {
  /** The resources only this agent writes; none: reconciliation is off, every batch whose outcome is unknown is sent again unread. */
  ids: readonly number[];
  /** The head of the queue: while its batch's outcome is unknown, the baselines stay what they were before its request. */
  head: { readonly state: State };
}

export class Reconciler {
  /** False once the service answered in the `{success, failed}` form: it may store part of a batch. */
  private atomic = true;
  /** The resources only this agent writes. */
  private readonly ids: Uint32Array;
  /** Per resource of `ids`: the newest id_resource_feed the agent has seen; 0 for none, -1 while unknown. */
  private readonly lastIds: Float64Array;

  private readonly head: { readonly state: State };

  constructor(parts: ReconcilerParts) {
    this.ids = new Uint32Array(parts.ids);
    this.lastIds = new Float64Array(parts.ids.length).fill(-1);
    this.head = parts.head;
  }

  /** The start-up lookup's answer: each resource's `id_last_feed`. */
  looked(records: readonly Resource[]): void {
    for (const r of records) this.saw(r.id_resource, r.id_last_feed ?? 0);
  }

  /** An operation-4 answer: the feeds it created, and whether it came in the `{success, failed}` form. */
  created(feeds: readonly CreatedFeed[], partial: boolean): void {
    if (partial) this.atomic = false;
    for (const f of feeds) this.saw(f.id_resource, f.id_resource_feed);
  }

  /** How many resources a read-back can decide: the size an `InFlight` record needs. */
  get size(): number {
    return this.ids.length;
  }

  /** Writes into `out` the baselines a read-back of the first `n` queued samples needs: one per resource of theirs. */
  baselines(n: number, queue: SampleQueue, out: InFlight): void {
    out.size = 0;
    for (let p = 0; p < n; p++) {
      const id = queue.resourceAt(p);
      const i = this.ids.indexOf(id);
      if (i < 0 || listed(out, id)) continue;
      out.resources[out.size] = id;
      // A service that may store part of a batch leaves nothing to compare with: an unknown baseline,
      // so that a run after a restart, which cannot know that, decides nothing but "not stored" of a
      // resource with no feed at all.
      out.lastIds[out.size++] = this.atomic ? this.lastIds[i] : -1;
    }
  }

  /** The baselines of a batch that was out when an earlier run ended: its read-back compares with them. */
  assume(batch: InFlight): void {
    for (let j = 0; j < batch.size; j++) {
      const i = this.ids.indexOf(batch.resources[j]);
      if (i >= 0) this.lastIds[i] = batch.lastIds[j];
    }
  }

  /** Whether a read-back can decide what became of the first `n` queued samples. */
  readable(n: number, queue: SampleQueue): boolean {
    if (!this.atomic) return false;
    for (let p = 0; p < n; p++) if (this.ids.indexOf(queue.resourceAt(p)) < 0) return false;
    return true;
  }

  /**
   * Reads the first `n` queued samples' resources back (operation 6, silent) and decides what became of
   * them; `settled`: the service has had time to finish the request, so "nothing new" means "not stored".
   * Rejects with the read's error, the baselines as they were.
   */
  async check(client: FeedClient, queue: SampleQueue, n: number, settled: boolean): Promise<number> {
    // The batch's resources by their last element, newest first, and where that element is.
    const ids: number[] = [];
    const at: number[] = [];
    for (let p = n - 1; p >= 0; p--) {
      const id = queue.resourceAt(p);
      if (ids.indexOf(id) >= 0) continue;
      ids.push(id);
      at.push(p);
    }
    const feeds = await client.lastFeeds(ids, { silent: true });
    return this.verdict(ids, at, feeds, queue, settled);
  }

  private verdict(ids: number[], at: number[], feeds: (Feed | null)[], queue: SampleQueue, settled: boolean): number {
    let stored = 0;
    let untouched = 0;
    let newer = 0;
    for (let k = 0; k < ids.length; k++) {
      const i = this.ids.indexOf(ids[k]);
      const before = this.lastIds[i];
      const feed = feeds[k];
      const id = feed === null ? 0 : feed.id_resource_feed;
      // What the read shows is the baseline for the next request, whatever is decided now.
      this.lastIds[i] = id;
      if (id === Math.max(before, 0)) untouched++;
      // Elements are stored in order, each with a larger id: the newer last element has the larger id,
      // by at least the number of elements from the older one to it.
      else if (before >= 0 && id > before && feed !== null && feed.raw_data === rawData(queue.valueAt(at[k])) &&
        (k === 0 || newer - id >= at[k - 1] - at[k])) stored++;
      newer = id;
    }
    if (stored === ids.length) return STORED;
    return untouched === ids.length && settled ? NOT_STORED : UNDECIDED;
  }

  private saw(resource: number, id: number): void {
    const i = this.ids.indexOf(resource);
    if (i >= 0 && id > this.lastIds[i] && this.head.state !== 'unknown') this.lastIds[i] = id;
  }
}

/** `id` is among the resources `batch` uses. */
function listed(batch: InFlight, id: number): boolean {
  for (let j = 0; j < batch.size; j++) if (batch.resources[j] === id) return true;
  return false;
}
