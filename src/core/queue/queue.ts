// The sample queue: a FIFO ring whose memory is fixed when the agent starts (or, in memory a host lends,
// grows and shrinks with what it holds, see `QueueMemory`). On the device every object
// property costs a 16-byte slot, so samples live in parallel typed arrays (which cost their bytes and
// nothing more), and queuing a number or a boolean allocates nothing. A string's UTF-8 bytes go to a byte
// ring, the string pool, that holds the strings of the queued samples in queue order with no gap: the
// oldest string starts at the pool's head, so removing samples from the queue's head frees pool bytes in
// order, and an eviction behind locked samples slides the locked strings over the freed bytes.
//
// Samples are numbered by position since the queue was made: the oldest is at `first`, and position p
// lives in slot p % slots. XS interprets every bytecode, so the agent's common case, a number of a
// resource with a text entry, takes `pushNumber` rather than `push` (the fast lane, see `record` in
// agent.ts), and batch-body.ts turns such a sample into text with one lookup: it reads the typed arrays
// below as they are, by the tag layout this module exports.
import type { Host, QueueMemory, SampleValue } from '../host/host';
import { asciiRead, utf8Length, utf8Read, utf8Write } from '../wire/utf8';

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

// A sample's tag byte: bits 0-3 its text entry (NO_ENTRY: none), bits 4-5 its kind, bit 6 set for a
// string that is all ASCII. A number with a text entry has a tag below NO_ENTRY: one comparison in the
// body encoder (batch-body.ts).
export const ENTRY = 0x0f, NO_ENTRY = 0x0f;
export const KIND_SHIFT = 4;
export const NUMBER = 0, FALSE = 1, TRUE = 2, STRING = 3;
export const STRING_TAG = STRING << KIND_SHIFT;
const ASCII = 0x40;

// A string sample keeps `length * LENGTH_UNIT + offset` in its value: an offset below 2^32 and a length
// below 2^21 stay exact in a double, and need no array of their own.
const LENGTH_UNIT = 4294967296;
const MAX_STRING_BYTES = 2097151;
const MAX_POOL_BYTES = 4294967295;

/**
 * The ring a queue in lent memory starts at, and shrinks back to once it has emptied. A gateway device's
 * queue holds what arrives between two of its turns, a few dozen readings (docs/gateway.md, "The window").
 */
export const FIRST_SLOTS = 32;

export class SampleQueue {
  /** The most samples it holds. */
  readonly capacity: number;
  /** Slots of the ring now: `capacity`, or less in lent memory (see `resize`). Written by this class only. */
  slots: number;
  /**
   * Bytes of typed-array memory at `capacity` samples: 21 per sample (29 with seq), the string pool, 60 for
   * the text entries' ids. The body encoder's texts (a 48-element array, up to 45 short strings) come on top.
   */
  readonly bytes: number;
  private readonly dropOldest: boolean;
  private readonly clock: Pick<Host, 'now'>;
  // The storage by slot. `resources`, `tags`, `values` and `entryIds` are read by the body encoder
  // (batch-body.ts), never written outside this class, which replaces them all when the ring is resized.
  /** The resource id of a sample without a text entry (the others find theirs in `entryIds`). */
  resources!: Uint32Array;
  tags!: Uint8Array;
  /** The number, or the packed string length and pool offset; 0 for a boolean. */
  values!: Float64Array;
  /** When each sample was taken, by the host's clock (NaN: restored without a time on this run's clock); read by the body encoder. */
  ats!: Float64Array;
  private seqs: Float64Array | null = null;
  private pool!: Uint8Array;
  private readonly withSeq: boolean;
  /** The host's memory and the region of it the arrays are in; null: a buffer of the queue's own. */
  private readonly memory: QueueMemory | null;
  private region: Uint8Array | null = null;
  /** The pool's length: a typed array's `length` is a getter call on XS, a field is not. */
  private readonly poolBytes: number;
  private readonly maxStringBytes: number;
  /**
   * The resource id of each text entry, claimed in order; 0 while unclaimed. A claimed entry keeps its
   * id for the queue's life, so the entry a queued sample carries never goes stale. A device has few
   * resources; the samples of ids beyond the entries keep their id in `resources`.
   */
  entryIds!: Uint32Array;
  /** Text entries claimed so far, in `entryIds` order. */
  entriesClaimed = 0;
  /** The position of the oldest sample. */
  first = 0;
  /** The position of slot 0 in the pass of the ring that `tail` is on. */
  private base = 0;
  /** The slot of the next sample (`slots` once the pass is full: push starts the next one). */
  private tail = 0;
  /** Keeps the fast lane (`pushNumber`) within the pass, short of a full queue and of `wake`'s length. */
  private limit = 0;
  /** See `wake`. */
  private wakeLength = 1;
  /** Position of the newest sample that needs more than its text and its number in the body; -1 for none. */
  lastSpecial = -1;
  private locked = 0;
  /**
   * Where the first locked sample is, once evictions turned the locked samples in their slots (see
   * `makeRoom`): the i-th of them is at offset `(i + head) mod locked` from `first`. 0 when they are
   * in order, always when nothing is locked.
   */
  private head = 0;
  /** The most samples queued at once, as of the last time the queue shrank (see `highWater`). */
  private high = 0;
  private dropped = 0;
  /** Next free pool byte; the oldest string starts `poolUsed` bytes before it (wrapping). */
  private poolTail = 0;
  private poolUsed = 0;

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
    this.capacity = o.capacity;
    this.dropOldest = o.overflow === 'drop-oldest';
    this.clock = o.clock;
    this.withSeq = o.withSeq;
    this.poolBytes = o.stringBytes;
    this.maxStringBytes = Math.min(o.stringBytes, MAX_STRING_BYTES);
    this.memory = o.memory ?? null;
    this.bytes = this.bytesFor(o.capacity);
    this.slots = this.memory === null ? o.capacity : Math.min(o.capacity, FIRST_SLOTS);
    this.lay(this.slots);
  }

  /** A resource id, a tag, a value and a time per slot, a sequence number with durable storage, the pool and the entries. */
  private bytesFor(slots: number): number {
    return slots * (4 + 1 + 8 + 8 + (this.withSeq ? 8 : 0)) + this.poolBytes + NO_ENTRY * 4;
  }

  /**
   * Puts the arrays in a buffer of `n` slots: one buffer for every array, the widest elements first so that
   * each view is aligned. One ArrayBuffer (and on Node one allocation) a queue, not seven; a gateway makes
   * thousands of queues, and lends them memory from a few large buffers. Returns the region it left.
   */
  private lay(n: number): Uint8Array | null {
    const bytes = this.bytesFor(n);
    const old = this.region;
    const region = this.memory === null ? null : this.memory.take(bytes);
    if (region !== null && (region.byteLength < bytes || region.byteOffset % 8 !== 0)) {
      throw new RangeError('queue memory must hold ' + bytes + ' bytes from an offset that is a multiple of 8');
    }
    this.region = region;
    const buffer = region === null ? new ArrayBuffer(bytes) : region.buffer;
    let at = region === null ? 0 : region.byteOffset;
    this.values = new Float64Array(buffer, at, n);
    this.ats = new Float64Array(buffer, (at += 8 * n), n);
    this.seqs = this.withSeq ? new Float64Array(buffer, (at += 8 * n), n) : null;
    this.resources = new Uint32Array(buffer, (at += 8 * n), n);
    this.entryIds = new Uint32Array(buffer, (at += 4 * n), NO_ENTRY);
    this.tags = new Uint8Array(buffer, (at += 4 * NO_ENTRY), n);
    this.pool = new Uint8Array(buffer, at + n, this.poolBytes);
    return old;
  }

  /**
   * Moves the samples to a ring of `n` slots (at least `length`) in memory lent anew, and gives the old
   * region back. Each keeps its position, so it goes to slot position % n; the pool and the entries are
   * copied as they are. Positions held elsewhere (the uplink's, the stored queue's) stay true.
   */
  private resize(n: number): void {
    const { values, ats, seqs, resources, tags, entryIds, pool } = this;
    const was = this.slots;
    const old = this.lay(n);
    for (let p = this.first, end = this.end; p < end; p++) {
      const a = p % was, b = p % n;
      this.values[b] = values[a];
      this.ats[b] = ats[a];
      if (seqs !== null) (this.seqs as Float64Array)[b] = seqs[a];
      this.resources[b] = resources[a];
      this.tags[b] = tags[a];
    }
    this.entryIds.set(entryIds);
    this.pool.set(pool);
    const end = this.end;
    this.slots = n;
    this.tail = end % n;
    this.base = end - this.tail;
    this.setLimit();
    if (old !== null) (this.memory as QueueMemory).give(old);
  }

  /**
   * In lent memory, shrinks a ring that is three quarters empty, so that a queue that grew for a burst
   * (an outage, a backlog) gives the memory back once the burst has left.
   */
  private settle(): void {
    if (this.memory === null || 4 * this.length > this.slots) return;
    // The least ring of the doubling that holds twice what is queued: one more burst like it fits.
    let n = FIRST_SLOTS;
    while (n < 2 * this.length) n *= 2;
    if (n < this.slots) this.resize(n);
  }


  get length(): number {
    return this.base + this.tail - this.first;
  }

  /** The position of the next sample: how many were ever queued. */
  get end(): number {
    return this.base + this.tail;
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
   * Queues one sample. Returns PUSHED, PUSHED_EVICTED (drop-oldest made room), DROPPED_NEW (no room, the
   * sample is refused) or TOO_LARGE (a string longer than the pool could ever hold). Allocates nothing.
   * Throws on a misuse the agent rules out first: a resource id that is not an integer in [1, 2^32), a
   * number that is not finite (JSON has no form for it), a value of another type.
   */
  push(resource: number, value: SampleValue, at: number, seq: number): number {
    if (resource >>> 0 !== resource || resource === 0) throw new RangeError('resource id must be an integer in [1, 2^32)');
    let kind: number;
    let bytes = 0;
    if (typeof value === 'number') {
      if (value - value !== 0) throw new RangeError('sample value must be a finite number');
      kind = NUMBER;
    } else if (typeof value === 'boolean') {
      kind = value ? TRUE : FALSE;
    } else if (typeof value === 'string') {
      bytes = utf8Length(value);
      if (bytes > this.maxStringBytes) return TOO_LARGE;
      kind = STRING;
    } else {
      throw new TypeError('sample value must be a number, a boolean or a string');
    }
    let result = PUSHED;
    if (this.length === this.capacity || this.poolUsed + bytes > this.poolBytes) {
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
      const tail = this.poolTail;
      this.values[j] = bytes * LENGTH_UNIT + tail;
      if (utf8Write(value as string, this.pool, tail)) tag |= ASCII;
      this.poolTail = this.poolAt(tail + bytes);
      this.poolUsed += bytes;
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
   * durable storage its turn (`keep` in agent.ts).
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

  /** A sample of `value` can be queued now without evicting or refusing one. */
  fits(value: SampleValue): boolean {
    if (this.length === this.capacity) return false;
    return typeof value !== 'string' || this.poolUsed + utf8Length(value) <= this.poolBytes;
  }

  /** A string longer than the pool could ever hold (`push` returns TOO_LARGE for it). */
  tooLarge(value: SampleValue): boolean {
    return typeof value === 'string' && utf8Length(value) > this.maxStringBytes;
  }

  /** Resource of the `i`-th sample from the head. */
  resourceAt(i: number): number {
    return this.idAt(this.slot(i));
  }

  /** Value of the `i`-th sample from the head. A string sample is decoded: a new string each call. */
  valueAt(i: number): SampleValue {
    const j = this.slot(i);
    const tag = this.tags[j];
    if (tag >= STRING_TAG) return this.stringAt(j);
    return tag >> KIND_SHIFT === NUMBER ? this.values[j] : tag >> KIND_SHIFT === TRUE;
  }

  /** When the `i`-th sample was queued (NaN: restored without a time on this run's clock). */
  atAt(i: number): number {
    return this.ats[this.slot(i)];
  }

  /** Sequence number of the `i`-th sample; -1 when the queue keeps none. */
  seqAt(i: number): number {
    const j = this.slot(i);
    return this.seqs === null ? -1 : this.seqs[j];
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
    if (this.poolUsed > 0) {
      let freed = 0;
      for (let p = this.first; p < this.first + count; p++) {
        const j = p % this.slots;
        if (this.tags[j] >= STRING_TAG) freed += lengthOf(this.values[j]);
      }
      this.poolUsed -= freed;
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

  private setLimit(): void {
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
    while (count - evict === this.capacity || this.poolUsed - freed + bytes > this.poolBytes) {
      if (this.locked + evict === count) return false;
      const j = p++ % this.slots;
      if (this.tags[j] >= STRING_TAG) freed += lengthOf(this.values[j]);
      evict++;
    }
    if (this.locked > 0) this.makeRoom(evict);
    this.remove(evict);
    if (this.locked > 0 && freed > 0) this.slideLockedStrings(freed);
    this.poolUsed -= freed;
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
   * The strings of the locked samples start the pool and the evicted ones came next: the locked bytes move
   * `freed` bytes forward over them, so the pool stays gapless and in order. Only when strings were
   * evicted behind a lock: costs the locked samples and their bytes (a batch at most).
   */
  private slideLockedStrings(freed: number): void {
    const poolStart = this.poolAt(this.poolTail + this.poolBytes - this.poolUsed);
    let lockedBytes = 0;
    for (let p = this.first; p < this.first + this.locked; p++) {
      const j = p % this.slots;
      if (this.tags[j] < STRING_TAG) continue;
      const length = lengthOf(this.values[j]);
      lockedBytes += length;
      this.values[j] = length * LENGTH_UNIT + this.poolAt(offsetOf(this.values[j]) + freed);
    }
    if (lockedBytes === 0) return;
    const pool = this.pool;
    if (poolStart + freed + lockedBytes <= this.poolBytes) {
      pool.copyWithin(poolStart + freed, poolStart, poolStart + lockedBytes);
    } else {
      // Backwards, so a byte is read before the slide overwrites it.
      for (let b = lockedBytes - 1; b >= 0; b--) pool[this.poolAt(poolStart + freed + b)] = pool[this.poolAt(poolStart + b)];
    }
  }

  /** Puts the locked samples back in their order (after `makeRoom` turned them): three reversals, no extra memory. */
  private unturn(): void {
    const locked = this.locked;
    // Sample i is at offset (i + head) mod locked: turning the block left by head restores the order.
    const d = this.head;
    this.reverse(0, d);
    this.reverse(d, locked);
    this.reverse(0, locked);
    this.head = 0;
  }

  /** Reverses the samples at offsets [from, to) from the head. */
  private reverse(from: number, to: number): void {
    for (let a = this.first + from, b = this.first + to - 1; a < b; a++, b--) this.swap(a, b);
  }

  /** Copies the sample at position `from` to position `to`, keeping `lastSpecial` at or above every special one. */
  private moveSlot(from: number, to: number): void {
    const a = from % this.slots, b = to % this.slots;
    const tag = this.tags[a];
    if (tag >= NO_ENTRY && to > this.lastSpecial) this.lastSpecial = to;
    this.resources[b] = this.resources[a];
    this.tags[b] = tag;
    this.values[b] = this.values[a];
    this.ats[b] = this.ats[a];
    if (this.seqs !== null) this.seqs[b] = this.seqs[a];
  }

  /** Exchanges the samples at positions `pa` < `pb`. */
  private swap(pa: number, pb: number): void {
    const a = pa % this.slots, b = pb % this.slots;
    const resource = this.resources[a], tag = this.tags[a], value = this.values[a], at = this.ats[a];
    const seq = this.seqs === null ? 0 : this.seqs[a];
    this.moveSlot(pb, pa);
    if (tag >= NO_ENTRY && pb > this.lastSpecial) this.lastSpecial = pb;
    this.resources[b] = resource;
    this.tags[b] = tag;
    this.values[b] = value;
    this.ats[b] = at;
    if (this.seqs !== null) this.seqs[b] = seq;
  }

  private idAt(j: number): number {
    const entry = this.tags[j] & ENTRY;
    return entry === NO_ENTRY ? this.resources[j] : this.entryIds[entry];
  }

  /** The text entry of `resource`, claiming a free one; NO_ENTRY when every entry is taken. */
  private entryOf(resource: number): number {
    const e = this.entryIds.indexOf(resource);
    if (e >= 0) return e;
    if (this.entriesClaimed === NO_ENTRY) return NO_ENTRY;
    this.entryIds[this.entriesClaimed] = resource;
    return this.entriesClaimed++;
  }

  /** The string of slot `j` (a string sample), decoded: a new string each call. */
  stringAt(j: number): string {
    const v = this.values[j];
    const read = (this.tags[j] & ASCII) !== 0 ? asciiRead : utf8Read;
    return read(this.pool, offsetOf(v), lengthOf(v));
  }

  /** Ring slot of the `i`-th sample from the head; throws RangeError outside the queue. */
  private slot(i: number): number {
    if (!Number.isInteger(i) || i < 0 || i >= this.length) {
      throw new RangeError('sample index ' + i + ' is outside the queue (length ' + this.length + ')');
    }
    const j = i < this.locked ? (i + this.head) % this.locked : i;
    return (this.first + j) % this.slots;
  }

  /** Pool index of byte `p` (0 ≤ p < 2 × pool size); correct for an empty pool too. */
  private poolAt(p: number): number {
    return p >= this.poolBytes ? p - this.poolBytes : p;
  }

  private checkCount(count: number): number {
    if (!Number.isInteger(count) || count < 0 || count > this.length) {
      throw new RangeError('count ' + count + ' is outside the queue (length ' + this.length + ')');
    }
    return count;
  }
}

function lengthOf(packed: number): number {
  return (packed - (packed % LENGTH_UNIT)) / LENGTH_UNIT;
}

function offsetOf(packed: number): number {
  return packed % LENGTH_UNIT;
}
