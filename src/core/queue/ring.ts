// The ring the sample queue (queue.ts) keeps its samples in. On the device every object property costs
// a 16-byte slot, so samples live in parallel typed arrays (which cost their bytes and nothing more), in
// one buffer (lent-memory.ts), with a string's UTF-8 bytes in the string pool (string-pool.ts).
//
// Samples are numbered by position since the queue was made: the oldest is at `first`, and position p
// lives in slot p % slots. The first `locked` samples are the ones a request carries; an eviction right
// behind them may turn them in their slots (`makeRoom` in queue.ts): the i-th is then at offset
// (i + head) mod locked from `first`, and `unturn` puts them back in order.
import type { QueueMemory, SampleValue } from '../host/host';
import { ASCII, ENTRY, KIND_SHIFT, NO_ENTRY, NUMBER, STRING_TAG, TRUE } from './tags';
import { StringPool } from './string-pool';
import type { Slots } from './lent-memory';
import { copySamples, FIRST_SLOTS, QueueBuffer, shrunk } from './lent-memory';

export abstract class Ring {
  /** The most samples it holds. */
  readonly capacity: number;
  /** Slots of the ring now: `capacity`, or less in lent memory (see `resize`). Written by this class only. */
  slots: number;
  /**
   * Bytes of typed-array memory at `capacity` samples: 21 per sample (29 with seq), the string pool, 60 for
   * the text entries' ids. The body encoder's texts (a 48-element array, up to 45 short strings) come on top.
   */
  readonly bytes: number;
  // The storage by slot. `resources`, `tags`, `values`, `ats` and `entryIds` are read by the body encoder
  // (batch-body.ts), never written outside the queue, which replaces them all when the ring is resized.
  /** The resource id of a sample without a text entry (the others find theirs in `entryIds`). */
  resources!: Uint32Array;
  tags!: Uint8Array;
  /** The number, or the packed string length and pool offset (tags.ts); 0 for a boolean. */
  values!: Float64Array;
  /** When each sample was taken, by the host's clock (NaN: restored without a time on this run's clock). */
  ats!: Float64Array;
  protected seqs: Float64Array | null = null;
  protected readonly strings: StringPool;
  private readonly buffer: QueueBuffer;
  /** The host lends the memory (see `settle`). */
  private readonly lent: boolean;
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
  protected base = 0;
  /** The slot of the next sample (`slots` once the pass is full: push starts the next one). */
  protected tail = 0;
  /** Position of the newest sample that needs more than its text and its number in the body; -1 for none. */
  lastSpecial = -1;
  /** Samples locked at the head: a request carries them. */
  protected locked = 0;
  /** Where the first locked sample is, once evictions turned them (see above); 0 when they are in order. */
  protected head = 0;

  constructor(capacity: number, stringBytes: number, withSeq: boolean, memory: QueueMemory | undefined) {
    this.capacity = capacity;
    this.buffer = new QueueBuffer(memory, withSeq, stringBytes);
    this.lent = this.buffer.lent;
    this.bytes = this.buffer.bytesFor(capacity);
    this.slots = this.lent ? Math.min(capacity, FIRST_SLOTS) : capacity;
    const s = this.buffer.lay(this.slots);
    this.adopt(s);
    this.strings = new StringPool(s.pool);
  }

  /** Keeps the fast lane within the ring as it is now (queue.ts). */
  protected abstract setLimit(): void;

  get length(): number {
    return this.base + this.tail - this.first;
  }

  /** The position of the next sample: how many were ever queued. */
  get end(): number {
    return this.base + this.tail;
  }

  /**
   * Moves the samples to a ring of `n` slots (at least `length`) in memory lent anew, and gives the old
   * region back. Each keeps its position; the pool and the entries are copied as they are. Positions held
   * elsewhere (the uplink's, the stored queue's) stay true.
   */
  protected resize(n: number): void {
    const was: Slots = { values: this.values, ats: this.ats, seqs: this.seqs, resources: this.resources, entryIds: this.entryIds, tags: this.tags, pool: this.strings.bytes };
    const next = this.buffer.lay(n);
    const end = this.end;
    copySamples(was, this.slots, next, n, this.first, end);
    this.adopt(next);
    this.strings.bytes = next.pool;
    this.slots = n;
    this.tail = end % n;
    this.base = end - this.tail;
    this.setLimit();
    this.buffer.giveBack();
  }

  /**
   * In lent memory, shrinks a ring that is three quarters empty, so that a queue that grew for a burst
   * (an outage, a backlog) gives the memory back once the burst has left.
   */
  protected settle(): void {
    if (!this.lent) return;
    const n = shrunk(this.length, this.slots);
    if (n < this.slots) this.resize(n);
  }

  private adopt(s: Slots): void {
    this.values = s.values;
    this.ats = s.ats;
    this.seqs = s.seqs;
    this.resources = s.resources;
    this.entryIds = s.entryIds;
    this.tags = s.tags;
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

  /** The string of slot `j` (a string sample), decoded: a new string each call. */
  stringAt(j: number): string {
    return this.strings.read(this.values[j], (this.tags[j] & ASCII) !== 0);
  }

  protected idAt(j: number): number {
    const entry = this.tags[j] & ENTRY;
    return entry === NO_ENTRY ? this.resources[j] : this.entryIds[entry];
  }

  /** The text entry of `resource`, claiming a free one; NO_ENTRY when every entry is taken. */
  protected entryOf(resource: number): number {
    const e = this.entryIds.indexOf(resource);
    if (e >= 0) return e;
    if (this.entriesClaimed === NO_ENTRY) return NO_ENTRY;
    this.entryIds[this.entriesClaimed] = resource;
    return this.entriesClaimed++;
  }

  /** Ring slot of the `i`-th sample from the head; throws RangeError outside the queue. */
  private slot(i: number): number {
    if (!Number.isInteger(i) || i < 0 || i >= this.length) {
      throw new RangeError('sample index ' + i + ' is outside the queue (length ' + this.length + ')');
    }
    const j = i < this.locked ? (i + this.head) % this.locked : i;
    return (this.first + j) % this.slots;
  }

  /** Puts the locked samples back in their order (after `makeRoom` turned them): three reversals, no extra memory. */
  protected unturn(): void {
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
  protected moveSlot(from: number, to: number): void {
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
}
