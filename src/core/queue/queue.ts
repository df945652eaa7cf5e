// The sample queue: a FIFO of samples in a ring (ring.ts) whose memory is fixed when the agent starts
// (or, in memory a host lends, grows and shrinks with what it holds: lent-memory.ts). Queuing a number
// or a boolean allocates nothing; a string's bytes go to the string pool (string-pool.ts). When full, it
// evicts the oldest samples that are not locked (drop-oldest) or refuses the new one (drop-newest).
//
// XS interprets every bytecode, so the agent's common case, a number of a resource with a text entry,
// takes `pushNumber` rather than `push` (the fast lane, see `record` in agent.ts), and the body encoder
// (batch-body.ts) turns such a sample into text with one lookup: it reads the ring's typed
// arrays as they are, by the tag layout of tags.ts, rather than through a call per sample.
//
// A string's UTF-8 length is measured once, where the sample comes in (`poolBytes`, wire/utf8.ts), and
// handed to `fits`, `tooLarge` and `push`, which do not measure it again.
import type { Host, QueueMemory, SampleValue } from '../host/host';
import { Ring } from './ring';
import { ASCII, FALSE, KIND_SHIFT, MAX_POOL_BYTES, MAX_STRING_BYTES, NO_ENTRY, NUMBER, STRING, STRING_TAG, TRUE, lengthOf } from './tags';

export type OverflowPolicy = 'drop-oldest' | 'drop-newest';

export interface QueueOptions {
  /** Samples the ring holds (integer ≥ 1). */
  capacity: number;
  overflow: OverflowPolicy;
  /** Bytes of the string pool (integer ≥ 0); no string longer than this can be queued. */
  stringBytes: number;
  /** Keep a sequence number per sample (durable storage). */
  withSeq: boolean;
  /** Stamps the samples of the fast lane (`pushNumber`): the host. */
  clock: Pick<Host, 'now'>;
  /**
   * Where its arrays live (Host['memory']): the ring starts at FIRST_SLOTS and doubles while full, up to
   * `capacity`. Without it the queue allocates a buffer of its own for `capacity` samples at once.
   */
  memory?: QueueMemory;
}

// Results of `push`.
export const PUSHED = 0, PUSHED_EVICTED = 1, DROPPED_NEW = 2, TOO_LARGE = 3;

export class SampleQueue extends Ring {
  private readonly dropOldest: boolean;
  private readonly clock: Pick<Host, 'now'>;
  private readonly maxStringBytes: number;
  /** Keeps the fast lane (`pushNumber`) within the pass, short of a full queue and of `wake`'s length. */
  private limit = 0;
  /** See `wake`. */
  private wakeLength = 1;
  /** The most samples queued at once, as of the last time the queue shrank (see `highWater`). */
  private high = 0;
  private dropped = 0;

  /**
   * Throws RangeError on a capacity that is not an integer ≥ 1, a stringBytes that is not an integer ≥ 0,
   * or memory that is too small or not at a multiple of 8 bytes.
   */
  constructor(o: QueueOptions) {
    if (!Number.isInteger(o.capacity) || o.capacity < 1) throw new RangeError('queue capacity must be an integer ≥ 1');
    if (!Number.isInteger(o.stringBytes) || o.stringBytes < 0 || o.stringBytes > MAX_POOL_BYTES) {
      throw new RangeError('queue stringBytes must be an integer in [0, 2^32)');
    }
    if (o.overflow !== 'drop-oldest' && o.overflow !== 'drop-newest') {
      throw new RangeError('queue overflow must be drop-oldest or drop-newest');
    }
    super(o.capacity, o.stringBytes, o.withSeq, o.memory);
    this.dropOldest = o.overflow === 'drop-oldest';
    this.clock = o.clock;
    this.maxStringBytes = Math.min(o.stringBytes, MAX_STRING_BYTES);
  }

  /** The most samples ever queued at once. */
  get highWater(): number {
    return Math.max(this.high, this.length);
  }

  /** Samples lost to overflow: old ones evicted plus new ones refused. TOO_LARGE strings are not counted. */
  get droppedOverflow(): number {
    return this.dropped;
  }

  /** Samples locked at the head: a request carries them, in order in their slots (see `makeRoom`). */
  get inFlight(): number {
    return this.locked;
  }

  /**
   * Queues one sample; `bytes` is what its value takes in the string pool (`poolBytes`). Returns PUSHED,
   * PUSHED_EVICTED (drop-oldest made room), DROPPED_NEW (no room, the sample is refused) or TOO_LARGE (a
   * string longer than the pool could ever hold). Allocates nothing. Throws on a misuse the agent rules
   * out first: a resource id that is not an integer in [1, 2^32), a number that is not finite (JSON has
   * no form for it), a value of another type.
   */
  push(resource: number, value: SampleValue, at: number, seq: number, bytes: number): number {
    if (resource >>> 0 !== resource || resource === 0) throw new RangeError('resource id must be an integer in [1, 2^32)');
    let kind: number;
    if (typeof value === 'number') {
      if (value - value !== 0) throw new RangeError('sample value must be a finite number');
      kind = NUMBER;
    } else if (typeof value === 'boolean') {
      kind = value ? TRUE : FALSE;
    } else if (typeof value === 'string') {
      if (bytes > this.maxStringBytes) return TOO_LARGE;
      kind = STRING;
    } else {
      throw new TypeError('sample value must be a number, a boolean or a string');
    }
    let result = PUSHED;
    // A number takes no pool bytes: the pool's test is for strings only.
    if (this.length === this.capacity || (bytes !== 0 && this.strings.used + bytes > this.strings.size)) {
      if (!this.dropOldest || !this.evictFor(bytes)) {
        this.dropped++;
        return DROPPED_NEW;
      }
      result = PUSHED_EVICTED;
    }
    // Full in lent memory, short of capacity: twice the ring. (A ring of `capacity` slots, the device's,
    // takes one comparison.)
    if (this.slots < this.capacity) if (this.length === this.slots) this.resize(Math.min(this.capacity, 2 * this.slots));
    if (this.tail === this.slots) {
      this.base += this.slots;
      this.tail = 0;
      this.setLimit();
    }
    const j = this.tail;
    const entry = this.entryOf(resource);
    let tag = (kind << KIND_SHIFT) | entry;
    if (entry === NO_ENTRY) this.resources[j] = resource;
    if (tag >= NO_ENTRY) this.lastSpecial = this.base + j;
    this.ats[j] = at;
    if (this.seqs !== null) this.seqs[j] = seq;
    if (kind === STRING) {
      this.values[j] = this.strings.add(value as string, bytes);
      if (this.strings.ascii) tag |= ASCII;
    } else {
      this.values[j] = kind === NUMBER ? (value as number) : 0;
    }
    this.tags[j] = tag;
    this.tail = j + 1;
    return result;
  }

  /**
   * The fast lane: queues a number whose resource has the text entry `tag` (`numberTag`) and returns
   * true, or does nothing and returns false when the sample needs `push` (see `wake`). The caller has
   * checked the number; allocates nothing. It reads the time itself rather than take it as `push` does:
   * XS runs a few bytecodes per declared parameter, on every sample (docs/xs.md).
   */
  pushNumber(tag: number, value: number): boolean {
    const j = this.tail;
    if (j >= this.limit) return false;
    this.tags[j] = tag;
    this.values[j] = value;
    this.ats[j] = this.clock.now();
    this.tail = j + 1;
    return true;
  }

  /**
   * The tag the fast lane takes for a number of `resource`: its text entry, claimed now if need be; -1
   * when every entry is taken.
   */
  numberTag(resource: number): number {
    const entry = this.entryOf(resource);
    return entry === NO_ENTRY ? -1 : entry;
  }

  /**
   * Keeps the fast lane shut for any sample that would leave `length` or more queued, so that it takes
   * `push` and its caller sees it: the uplink acts on the queue's length at only a few points. A queue
   * with sequence numbers (durable storage) keeps it shut: each of its samples needs its number, and
   * durable storage its turn (`keep` in stored-queue.ts).
   */
  wake(length: number): void {
    this.wakeLength = length;
    this.setLimit();
  }

  /**
   * `at` of the oldest sample; -1 when the queue is empty. A sample restored without a time on this run's
   * clock (NaN) counts as queued now.
   */
  oldestAt(): number {
    if (this.length === 0) return -1;
    // The oldest is the first locked sample, which a turn moved (see `makeRoom`).
    const at = this.ats[(this.first + this.head) % this.slots];
    return at === at ? at : this.clock.now();
  }

  /** A sample that takes `bytes` of the string pool (`poolBytes`) can be queued now without evicting or refusing one. */
  fits(bytes: number): boolean {
    return this.length < this.capacity && this.strings.used + bytes <= this.strings.size;
  }

  /** A string of `bytes` is longer than the pool could ever hold (`push` returns TOO_LARGE for it). */
  tooLarge(bytes: number): boolean {
    return bytes > this.maxStringBytes;
  }

  /** Marks the first `count` samples as in flight, in order in their slots: drop-oldest never evicts them. */
  lock(count: number): void {
    if (this.head !== 0) this.unturn();
    this.locked = this.checkCount(count);
  }

  /** Removes `count` samples from the head (acknowledged or set aside), with their strings and their lock. */
  shift(count: number): void {
    this.checkCount(count);
    // Removing part of the locked samples needs them in order; removing all of them does not.
    if (this.head !== 0 && count < this.locked) this.unturn();
    if (count >= this.locked) this.head = 0;
    if (this.strings.used > 0) {
      let freed = 0;
      for (let p = this.first; p < this.first + count; p++) {
        const j = p % this.slots;
        if (this.tags[j] >= STRING_TAG) freed += lengthOf(this.values[j]);
      }
      this.strings.used -= freed;
    }
    this.remove(count);
    this.locked = Math.max(0, this.locked - count);
    this.settle();
  }

  /** Moves the head `count` samples on; the high water mark is brought up to date before the queue shrinks. */
  private remove(count: number): void {
    this.high = this.highWater;
    this.first += count;
    this.setLimit();
  }

  protected setLimit(): void {
    const limit = this.first + Math.min(this.slots, this.wakeLength - 1) - this.base;
    this.limit = this.seqs !== null ? 0 : Math.min(this.slots, limit);
  }

  /**
   * drop-oldest: evicts the fewest oldest unlocked samples that leave room for one more sample of `bytes`
   * string bytes. Returns false, evicting nothing, when even evicting every unlocked sample would not.
   */
  private evictFor(bytes: number): boolean {
    const count = this.length;
    let evict = 0;
    let freed = 0;
    let p = this.first + this.locked;
    while (count - evict === this.capacity || this.strings.used - freed + bytes > this.strings.size) {
      if (this.locked + evict === count) return false;
      const j = p++ % this.slots;
      if (this.tags[j] >= STRING_TAG) freed += lengthOf(this.values[j]);
      evict++;
    }
    if (this.locked > 0) this.makeRoom(evict);
    this.remove(evict);
    if (this.locked > 0 && freed > 0) this.slideLockedStrings(freed);
    this.strings.used -= freed;
    this.dropped += evict;
    return true;
  }

  /**
   * Frees the slots of the `by` samples evicted right behind the locked ones by moving locked samples
   * onto them, so that the free slots are at the head, where the ring continues. The fewest moves do it:
   * when `by` is below the locked count, the first `by` locked slots move behind the last one and the
   * locked samples are turned by `by` in their slots (`head`), otherwise each moves once. Under
   * overflow while a request is out, every new sample evicts one: that costs one move, not the batch.
   */
  private makeRoom(by: number): void {
    const locked = this.locked;
    const jump = Math.max(by, locked);
    for (let k = 0, moves = Math.min(by, locked); k < moves; k++) this.moveSlot(this.first + k, this.first + k + jump);
    if (by < locked) this.head = (this.head + locked - by) % locked;
  }

  /**
   * The strings of the locked samples start the pool and the evicted ones came next: the locked strings
   * move `freed` bytes forward over them (string-pool.ts). Only when strings were evicted behind a lock.
   */
  private slideLockedStrings(freed: number): void {
    let lockedBytes = 0;
    for (let p = this.first; p < this.first + this.locked; p++) {
      const j = p % this.slots;
      if (this.tags[j] < STRING_TAG) continue;
      lockedBytes += lengthOf(this.values[j]);
      this.values[j] = this.strings.moved(this.values[j], freed);
    }
    this.strings.slide(freed, lockedBytes);
  }

  private checkCount(count: number): number {
    if (!Number.isInteger(count) || count < 0 || count > this.length) {
      throw new RangeError('count ' + count + ' is outside the queue (length ' + this.length + ')');
    }
    return count;
  }
}
