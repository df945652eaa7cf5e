// Keeps durable storage in step with the queue: what it holds of the accepted samples, what it was told
// is finished, and when a storage that writes only when needed writes a burst. The agent accepts a sample
// through `accepted`, the uplink's acknowledgements reach storage through `checkpoint`, each operation-4
// request's batch through `sending`, and `restore` puts back what an earlier run left, with the batch
// that was out when it ended.
import type { InFlight, LogLevel, QueueStorage, SampleValue } from './host';
import type { Counters } from './counters';
import { errorText } from './errors';
import { DROPPED_NEW, TOO_LARGE } from './queue';
import type { SampleQueue } from './queue';
import type { Reconciler } from './reconcile';

export class StorageJournal {
  /** The sequence number the next accepted sample takes; they matter to durable storage only. */
  nextSeq = 0;
  /** `queue.end` once durable storage was restored: every later position is a sample accepted by this run. */
  restoredEnd = 0;
  private ackedSeq = -1;
  /** Queue position up to which durable storage holds the samples (`end` while it writes every sample). */
  private storedEnd = 0;
  /** Sequence number of the newest sample in durable storage; -1 when none. */
  private lastStoredSeq = -1;
  /** `QueueStorage.spillEvery`, or 0 for a storage that takes every sample as it is accepted. */
  private readonly spillEvery: number;
  /** No burst before this queue position: each attempt, written or failed, moves it `spillEvery` on. */
  private nextSpillAt = 0;
  /** What `sending` hands to storage, allocated at the first batch (only for a storage that keeps it). */
  private batch: InFlight | null = null;

  constructor(
    private readonly storage: QueueStorage | undefined,
    private readonly queue: SampleQueue,
    private readonly counters: Counters,
    private readonly log: (level: LogLevel, message: string) => void,
    /** A request failed and none was acknowledged since: storage that writes when needed writes. */
    private readonly failing: () => boolean,
  ) {
    this.spillEvery = storage?.spillEvery ?? 0;
  }

  /** A sample entered the queue with sequence number `seq` (the `nextSeq` it was pushed with). */
  accepted(seq: number, resource: number, value: SampleValue, evicted: boolean): void {
    this.nextSeq = seq + 1;
    if (this.storage !== undefined) this.keep(seq, resource, value, evicted);
  }

  /**
   * Writes every queued sample that durable storage does not hold yet, in one burst, and returns how many
   * (Agent.persist).
   */
  persist(): number {
    const q = this.queue;
    const first = q.end - q.length;
    const from = this.unstoredFrom();
    if (this.storage === undefined || from === q.end) return 0;
    this.nextSpillAt = q.end + this.spillEvery;
    // Acknowledgements first: an eviction's wait here (see keep), so the burst covers them.
    this.checkpoint();
    let written = 0;
    this.store((storage) => {
      for (let i = from - first; i < q.length; i++) storage.append(q.seqAt(i), q.resourceAt(i), q.valueAt(i));
      storage.commit?.();
      this.storedEnd = q.end;
      this.lastStoredSeq = q.seqAt(q.length - 1);
      written = q.end - from;
    });
    return written;
  }

  /** Tells durable storage that every sample it holds before the head of the queue is finished. */
  checkpoint(): void {
    if (this.storage === undefined) return;
    // Past the newest stored sample there is nothing to acknowledge: no write for samples it never held.
    const done = Math.min(this.queue.length > 0 ? this.queue.seqAt(0) - 1 : this.nextSeq - 1, this.lastStoredSeq);
    if (done <= this.ackedSeq) return;
    this.store((storage) => {
      storage.ack(done);
      this.ackedSeq = done;
    });
  }

  /**
   * An operation-4 request carrying the first `n` queued samples is about to go out: storage that can
   * keep it records the batch and the baselines its read-back would need (one write per batch).
   */
  sending(n: number, reconciler: Reconciler): void {
    const storage = this.storage;
    if (storage?.sending === undefined) return;
    const q = this.queue;
    const batch = this.batch ?? (this.batch = { firstSeq: 0, lastSeq: 0, count: 0, size: 0, resources: new Uint32Array(reconciler.size), lastIds: new Float64Array(reconciler.size) });
    batch.firstSeq = q.seqAt(0);
    batch.lastSeq = q.seqAt(n - 1);
    batch.count = n;
    reconciler.baselines(n, q, batch);
    this.store((s) => s.sending!(batch));
  }

  /**
   * Puts back what durable storage kept from an earlier run, oldest first, stamped `now`. Returns the
   * batch that was out in a request when that run ended, if it is the head of what came back: its
   * outcome is unknown.
   */
  restore(now: number): InFlight | null {
    const storage = this.storage;
    if (storage === undefined) return null;
    let restored = 0;
    let first = -1;
    this.nextSeq = storage.load((seq, resource, value) => {
      if (first < 0) first = seq;
      const result = this.queue.push(resource, value, now, seq);
      if (result !== DROPPED_NEW && result !== TOO_LARGE) restored++;
    });
    this.restoredEnd = this.queue.end;
    this.storedEnd = this.queue.end;
    this.lastStoredSeq = this.nextSeq - 1;
    this.ackedSeq = first < 0 ? this.nextSeq - 1 : first - 1;
    if (restored > 0) this.log('info', 'restored ' + restored + ' unacknowledged samples from durable storage');
    this.checkpoint();
    return restored > 0 ? this.outFromBefore() : null;
  }

  /** The batch storage kept as out in a request, if the restored queue begins with exactly its samples. */
  private outFromBefore(): InFlight | null {
    let batch: InFlight | null = null;
    this.store((s) => {
      batch = s.inFlight?.() ?? null;
    });
    const b = batch as InFlight | null;
    const q = this.queue;
    // Sequence numbers only increase, so equal ends and count mean the same samples; an acknowledged batch came back not at all.
    if (b === null || b.count < 1 || b.count > q.length || q.seqAt(0) !== b.firstSeq || q.seqAt(b.count - 1) !== b.lastSeq) return null;
    this.log('info', 'a batch of ' + b.count + ' samples was out in a request when the last run ended: it is read back before it is sent again');
    return b;
  }

  /**
   * Durable storage's part of accepting a sample: a storage of every sample writes it now (and learns of
   * an eviction at once); one that writes when needed waits for a failed flush and `spillEvery` unwritten
   * samples, and learns of evictions with the next burst, so that a full queue does not write per sample.
   */
  private keep(seq: number, resource: number, value: SampleValue, evicted: boolean): void {
    if (this.spillEvery === 0) {
      this.store((storage) => {
        storage.append(seq, resource, value);
        this.storedEnd = this.queue.end;
        this.lastStoredSeq = seq;
      });
      if (evicted) this.checkpoint();
    } else if (this.failing() && this.queue.end >= this.nextSpillAt && this.queue.end - this.unstoredFrom() >= this.spillEvery) {
      this.persist();
    }
  }

  /** The first queue position durable storage does not hold: what a burst would write from. */
  private unstoredFrom(): number {
    return Math.max(this.storedEnd, this.queue.end - this.queue.length);
  }

  /** A write to durable storage; a failure is counted and logged, and the sample stays queued in memory. */
  private store(write: (storage: QueueStorage) => void): void {
    try {
      write(this.storage as QueueStorage);
    } catch (e) {
      this.counters.storageErrors++;
      this.log('error', 'durable storage: ' + errorText(e));
    }
  }
}
