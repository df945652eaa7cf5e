// The queue as durable storage holds it. It keeps durable storage in step with the queue: what it holds of
// the accepted samples, what it was told is finished, when a storage that writes only when needed writes a
// burst, and, with a storage that holds a backlog, which samples live in storage only. The intake hands every
// accepted sample to `take`, measured (`poolBytes`), the uplink's departures reach storage through
// `checkpoint` (which also reads the backlog's oldest samples into the room they left), each operation-4
// request's batch through `sending`, and `restore` puts back what an earlier run left, with the batch that
// was out when it ended.
//
// With a backlog the RAM queue is a window onto storage (host.ts, QueueStorage): it holds the oldest samples,
// and once it is full, or while older samples wait in storage only, an accepted sample goes to storage alone.
// Nothing is dropped then until storage reaches its bound.
import type { InFlight, Log, QueueStorage, SampleValue, StoredVisit } from '../host/host';
import type { Counters } from '../host/counters';
import { errorText } from '../wire/errors';
import { poolBytes } from '../wire/utf8';
import { Wakers } from '../host/wakers';
import { DROPPED_NEW, PUSHED_EVICTED, TOO_LARGE, type OverflowPolicy, type SampleQueue } from './queue';
import { KeptBatch, type BaselineSource } from './kept-batch';

/** `take`'s result beside the queue's: the sample went to the backlog in storage. */
export const SPILLED = 4;

export interface StoredQueueParts {
  /** The host's durable storage; undefined: none, it keeps only its counts. */
  storage: QueueStorage | undefined;
  queue: SampleQueue;
  overflow: OverflowPolicy;
  counters: Counters;
  log: Log;
  /** The head of the queue: a request failed and none was acknowledged since, so storage that writes when needed writes. */
  head: { readonly retrying: boolean };
  /** Gives the baselines a batch's read-back would need, kept with the batch about to go. */
  reconciler: BaselineSource;
}

export class StoredQueue {
  /** The sequence number the next accepted sample takes; they matter to durable storage only. */
  nextSeq = 0;
  /** `queue.end` once durable storage was restored: later positions are samples of this run, or read in from the backlog. */
  private restoredEnd = 0;
  /** Samples spilled to the backlog in this run, and samples read from it into the window. */
  private spilled = 0;
  private readInAll = 0;
  /** Samples the backlog gave up at its bound (drop-oldest), or refused there (drop-newest, or nothing to give up). */
  dropped = 0;
  private ackedSeq = -1;
  /** Queue position up to which durable storage holds the samples (`end` while it writes every sample). */
  private storedEnd = 0;
  /** Sequence number of the newest sample in durable storage; -1 when none. */
  private lastStoredSeq = -1;
  /** `QueueStorage.spillEvery`, or 0 for a storage that takes every sample as it is accepted. */
  private readonly spillEvery: number;
  /** No burst before this queue position: each attempt, written or failed, moves it `spillEvery` on. */
  private nextSpillAt = 0;
  /** The storage holds a backlog (it has `read`). */
  private readonly holdsBacklog: boolean;
  private readonly dropOldest: boolean;
  /** The backlog: samples in storage only, from sequence number `readFrom` on. */
  private behind = 0;
  private readFrom = 0;
  /** Backlog appends since the last commit, for a storage that commits per burst. */
  private uncommitted = 0;
  /** Samples read into the window by the current `read`, and the visitor that reads them (made once; it holds only `this`). */
  private readIn = 0;
  private readonly intoWindow: StoredVisit;
  /** Woken at every departure, and at stop: a sample refused as full may be offered again (`Agent.whenRoom`). */
  readonly room = new Wakers();
  /** A backlog that refused a sample at its bound says so once until it takes one again. */
  private full = false;

  private readonly storage: QueueStorage | undefined;
  private readonly queue: SampleQueue;
  private readonly counters: Counters;
  private readonly log: Log;
  private readonly head: { readonly retrying: boolean };
  /** The batch out in a request, as storage keeps it; null without storage. */
  private readonly kept: KeptBatch | null;

  constructor(parts: StoredQueueParts) {
    const storage = parts.storage;
    this.storage = storage;
    this.queue = parts.queue;
    this.counters = parts.counters;
    this.log = parts.log;
    this.head = parts.head;
    this.kept = storage === undefined ? null : new KeptBatch(storage, parts.reconciler);
    this.spillEvery = storage?.spillEvery ?? 0;
    this.holdsBacklog = storage?.read !== undefined;
    this.dropOldest = parts.overflow === 'drop-oldest';
    this.intoWindow = (seq, resource, value, at) => {
      if (this.putBack(seq, resource, value, at, true) < 0) return false;
      this.readIn++;
      return true;
    };
  }

  /** Samples accepted in this run: queued in RAM (the queue's fast lane too) or stored in the backlog. */
  get accepted(): number {
    return this.queue.end - this.restoredEnd - this.readInAll + this.spilled;
  }

  /** Samples accepted and held in storage only: the backlog beyond the RAM window. */
  get backlog(): number {
    return this.behind;
  }

  /**
   * Queues an accepted sample of time `at`, which takes `bytes` of the string pool (`poolBytes`): in the
   * window, or in the backlog when the window is full or older samples wait in storage. Returns the
   * queue's result (PUSHED, PUSHED_EVICTED, DROPPED_NEW, TOO_LARGE) or SPILLED; DROPPED_NEW with a backlog
   * means it is at its bound. The sample passes once: the queue is asked by its size, then it is spilled
   * or pushed, and storage copies a pushed sample from the queue (`keep`).
   */
  take(resource: number, value: SampleValue, at: number, bytes: number): number {
    const q = this.queue;
    const seq = this.nextSeq;
    // A backlog a storage error kept from reading in is tried again with each new sample.
    if (this.behind > 0 && q.length === 0) this.refill();
    if (this.holdsBacklog && (this.behind > 0 || !q.fits(bytes))) {
      if (q.tooLarge(bytes)) return TOO_LARGE;
      return this.spill(seq, resource, value, at);
    }
    const result = q.push(resource, value, at, seq, bytes);
    if (result === DROPPED_NEW || result === TOO_LARGE) return result;
    this.nextSeq = seq + 1;
    if (this.storage !== undefined) this.keep(seq, resource, at, result === PUSHED_EVICTED);
    return result;
  }

  /** Writes every queued sample that durable storage does not hold yet, in one burst; returns how many (Agent.persist). */
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
      for (let i = from - first; i < q.length; i++) {
        if (storage.append(q.seqAt(i), q.resourceAt(i), q.valueAt(i), q.atAt(i)) === false) break;
        written++;
        this.storedEnd = first + i + 1;
        this.lastStoredSeq = q.seqAt(i);
      }
      this.uncommitted = 0;
      storage.commit?.();
    });
    if (this.storedEnd < q.end) this.atBound('kept in memory only');
    return written;
  }

  /**
   * Samples left the head of the queue: tells durable storage that every sample it holds before the
   * head is finished, reads the backlog's oldest samples into the room they left, and wakes `room`.
   */
  checkpoint(): void {
    if (this.storage !== undefined) {
      // Past the newest stored sample there is nothing to acknowledge: no write for samples it never held.
      const q = this.queue;
      const head = q.length > 0 ? q.seqAt(0) : this.behind > 0 ? this.readFrom : this.nextSeq;
      const done = Math.min(head - 1, this.lastStoredSeq);
      if (done > this.ackedSeq) {
        this.store((storage) => {
          storage.ack(done);
          this.ackedSeq = done;
        });
      }
      if (this.behind > 0) this.refill();
    }
    this.room.wake();
  }

  /** An operation-4 request carrying the first `n` queued samples is about to go out (kept-batch.ts). */
  sending(n: number): void {
    const kept = this.kept;
    if (kept !== null) this.store(() => kept.sending(n, this.queue));
  }

  /**
   * Puts back what durable storage kept from an earlier run, oldest first: a backlog no more than the
   * window holds, the rest read in as batches leave. Returns the batch that was out in a request when
   * that run ended, if it is the head of what came back: its outcome is unknown.
   */
  restore(): InFlight | null {
    const storage = this.storage;
    if (storage === undefined) return null;
    const q = this.queue;
    let restored = 0;
    let first = -1;
    let last = -1;
    const backlog = this.holdsBacklog;
    this.nextSeq = storage.load((seq, resource, value, at) => {
      // A backlog stops where the window is full; the rest is read in as batches leave.
      const result = this.putBack(seq, resource, value, at, backlog);
      if (result < 0) return false;
      if (first < 0) first = seq;
      last = seq;
      if (result !== DROPPED_NEW && result !== TOO_LARGE) restored++;
      return true;
    }, q.capacity);
    if (backlog) {
      this.readFrom = last >= 0 ? last + 1 : this.nextSeq;
      this.behind = Math.max(0, this.nextSeq - this.readFrom);
    }
    this.restoredEnd = q.end;
    this.storedEnd = q.end;
    this.lastStoredSeq = this.nextSeq - 1;
    this.ackedSeq = first < 0 ? this.nextSeq - 1 : first - 1;
    if (restored > 0) {
      this.log('info', 'restored ' + (restored + this.behind) + ' unacknowledged samples from durable storage' +
        (this.behind > 0 ? ' (' + this.behind + ' of them wait in storage until the queue has room)' : ''));
    }
    this.checkpoint();
    let b = null as InFlight | null;
    if (restored > 0) this.store(() => (b = (this.kept as KeptBatch).restored(q)));
    if (b !== null) this.log('info', 'a batch of ' + b.count + ' samples was out in a request when the last run ended: it is read back before it is sent again');
    return b;
  }

  /**
   * Durable storage's part of accepting a sample, the queue's newest: a storage of every sample writes it
   * now, its value as the queue holds it (as a burst writes it), and learns of an eviction at once; one
   * that writes when needed waits for a failed flush and `spillEvery` unwritten samples, and learns of
   * evictions with the next burst, so that a full queue does not write per sample.
   */
  private keep(seq: number, resource: number, at: number, evicted: boolean): void {
    if (this.spillEvery === 0) {
      const q = this.queue;
      const taken = this.append(this.storage as QueueStorage, seq, resource, q.valueAt(q.length - 1), at);
      if (taken === false) this.atBound('kept in memory only');
      if (taken === true) {
        this.storedEnd = this.queue.end;
        this.lastStoredSeq = seq;
      }
      if (evicted) this.checkpoint();
    } else if (this.head.retrying && this.queue.end >= this.nextSpillAt && this.queue.end - this.unstoredFrom() >= this.spillEvery) {
      this.persist();
    }
  }

  /**
   * A sample for the backlog: storage holds the window first (a storage that writes when needed writes
   * it now), so that what it holds stays in order; at its bound, drop-oldest gives up the oldest unit of
   * the backlog the window does not hold, drop-newest refuses the sample.
   */
  private spill(seq: number, resource: number, value: SampleValue, at: number): number {
    const storage = this.storage as QueueStorage;
    if (this.unstoredFrom() < this.queue.end && (this.persist(), this.unstoredFrom() < this.queue.end)) return this.refuse();
    let taken = this.append(storage, seq, resource, value, at);
    if (taken === false && this.dropOldest) {
      let given = 0;
      this.store((s) => {
        // What the window holds stays: the backlog gives up its oldest unit beyond it.
        given = s.discard?.((this.behind > 0 ? this.readFrom : this.nextSeq) - 1) ?? 0;
      });
      if (given > 0) {
        this.dropped += given;
        this.behind = Math.max(0, this.behind - given);
        this.log('warn', 'durable storage is full: gave up its ' + given + ' oldest samples beyond the queue in memory');
        taken = this.append(storage, seq, resource, value, at);
      }
    }
    if (taken !== true) return taken === false ? this.refuse() : DROPPED_NEW;
    this.full = false;
    if (this.behind === 0) this.readFrom = seq;
    this.behind++;
    this.nextSeq = seq + 1;
    this.lastStoredSeq = seq;
    this.spilled++;
    if (this.spillEvery > 0 && ++this.uncommitted >= this.spillEvery) this.commit();
    return SPILLED;
  }

  /** One append, on every sample's path (no closure: nothing allocated): true stored, false at the bound, null failed. */
  private append(storage: QueueStorage, seq: number, resource: number, value: SampleValue, at: number): boolean | null {
    try {
      return storage.append(seq, resource, value, at) !== false;
    } catch (e) {
      this.failed(e);
      return null;
    }
  }

  /** A burst of backlog appends is complete: a storage that commits per burst commits. */
  private commit(): void {
    this.uncommitted = 0;
    this.store((s) => s.commit?.());
  }

  /** The backlog is at its bound: the sample is refused, counted; said once until one is taken again. */
  private refuse(): number {
    this.dropped++;
    this.atBound('refused');
    return DROPPED_NEW;
  }

  private atBound(what: string): void {
    if (this.full) return;
    this.full = true;
    this.log('warn', 'durable storage is at its bound (' + (this.storage?.usedBytes?.() ?? '?') + ' of ' + (this.storage?.maxBytes ?? '?') +
      ' bytes): new samples are ' + what + ' until it has room');
  }

  /** A sample storage gives back, into the window: the queue's result, or -1 (it stays in storage) when `whileRoom` and it does not fit. */
  private putBack(seq: number, resource: number, value: SampleValue, at: number, whileRoom: boolean): number {
    const bytes = poolBytes(value);
    if (whileRoom && !this.queue.fits(bytes)) return -1;
    if (at !== at) this.counters.undated++;
    return this.queue.push(resource, value, at, seq, bytes);
  }

  /** Reads the backlog's oldest samples into the window's room, oldest first. */
  private refill(): void {
    const q = this.queue;
    const room = q.capacity - q.length;
    if (room === 0) return;
    // A storage that commits per burst reads what it committed: a burst under way is committed first.
    if (this.uncommitted > 0) this.commit();
    this.readIn = 0;
    this.store((storage) => {
      // Samples on disk are stored already: the window's new part needs no write.
      const next = storage.read!(this.readFrom, room, this.intoWindow);
      this.readFrom = next;
      this.behind = next >= this.nextSeq ? 0 : Math.max(0, this.behind - this.readIn);
    });
    this.readInAll += this.readIn;
    this.storedEnd = q.end;
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
      this.failed(e);
    }
  }

  private failed(e: unknown): void {
    this.counters.storageErrors++;
    this.log('error', 'durable storage: ' + errorText(e));
  }
}
