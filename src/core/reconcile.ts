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
// fixed: one id and one baseline per resource, in typed arrays sized at start.
import type { FeedClient } from './client';
import type { SampleQueue } from './queue';
import { rawData } from './validate';
import type { CreatedFeed, Feed, Resource } from './wire';

/** Verdicts of a read-back. */
export const STORED = 0, UNDECIDED = 2;
const NOT_STORED = 1;

export class Reconciler {
  /** The first `pending_` queued samples are a batch whose outcome is unknown; 0 when there is none. */
  pending_ = 0;
  /** A read-back made before this time cannot rule out that the service still stores the batch. */
  settledAt_ = 0;
  /** False once the service answered in the `{success, failed}` form: it may store part of a batch. */
  private atomic_ = true;
  /** The resources only this agent writes. */
  private readonly ids_: Uint32Array;
  /** Per resource of `ids_`: the newest id_resource_feed the agent has seen; 0 for none, -1 while unknown. */
  private readonly lastIds_: Float64Array;

  /**
   * `ids`: the resources only this agent writes (none: reconciliation is off, every batch whose outcome
   * is unknown is sent again unread); `waitMs`: how long after such a request a read-back can decide.
   */
  constructor(ids: readonly number[], private readonly waitMs_: number) {
    this.ids_ = new Uint32Array(ids);
    this.lastIds_ = new Float64Array(ids.length).fill(-1);
  }

  /** The start-up lookup's answer: each resource's `id_last_feed`. */
  looked_(records: readonly Resource[]): void {
    for (const r of records) this.saw_(r.id_resource, r.id_last_feed ?? 0);
  }

  /** An operation-4 answer: the feeds it created, and whether it came in the `{success, failed}` form. */
  created_(feeds: readonly CreatedFeed[], partial: boolean): void {
    if (partial) this.atomic_ = false;
    for (const f of feeds) this.saw_(f.id_resource, f.id_resource_feed);
  }

  /**
   * The request for the first `n` queued samples ended with its outcome unknown at `now`. True when they
   * are to be read back (from `now + waitMs` on) before anything is sent; false when that cannot decide.
   */
  begin_(n: number, queue: SampleQueue, now: number): boolean {
    if (!this.atomic_) return false;
    for (let p = 0; p < n; p++) if (this.ids_.indexOf(queue.resourceAt(p)) < 0) return false;
    this.pending_ = n;
    this.settledAt_ = now + this.waitMs_;
    return true;
  }

  /**
   * Reads the pending batch's resources back (operation 6, silent) and decides what became of it; `now`
   * is when the read goes out. The batch is no longer pending, unless the read rejects (with its error).
   */
  async check_(client: FeedClient, queue: SampleQueue, now: number): Promise<number> {
    const n = this.pending_;
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
    this.pending_ = 0;
    return this.verdict_(ids, at, feeds, queue, now >= this.settledAt_);
  }

  /** Gives the pending batch up: it is sent again undecided. */
  drop_(): void {
    this.pending_ = 0;
  }

  private verdict_(ids: number[], at: number[], feeds: (Feed | null)[], queue: SampleQueue, settled: boolean): number {
    let stored = 0;
    let untouched = 0;
    let newer = 0;
    for (let k = 0; k < ids.length; k++) {
      const i = this.ids_.indexOf(ids[k]);
      const before = this.lastIds_[i];
      const feed = feeds[k];
      const id = feed === null ? 0 : feed.id_resource_feed;
      // What the read shows is the baseline for the next request, whatever is decided now.
      this.lastIds_[i] = id;
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

  private saw_(resource: number, id: number): void {
    const i = this.ids_.indexOf(resource);
    // While a batch is pending its baseline must stay what it was before the request.
    if (i >= 0 && this.pending_ === 0 && id > this.lastIds_[i]) this.lastIds_[i] = id;
  }
}
