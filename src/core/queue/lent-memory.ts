// Where the queue's arrays live: one buffer for all of them, the widest elements first so that each view
// is aligned. Without a host's memory it is the queue's own, allocated once for `capacity` samples, as on
// the device. With one (Host['memory']) it is a region the host lends, taken anew each time the ring
// grows or shrinks, the old one given back: a gateway makes thousands of queues, and lends them memory
// from a few large buffers.
import type { QueueMemory } from '../host/host';
import { NO_ENTRY } from './tags';

/**
 * The ring a queue in lent memory starts at, and shrinks back to once it has emptied. A gateway device's
 * queue holds what arrives between two of its turns, a few dozen readings (docs/gateway.md, "The window").
 */
export const FIRST_SLOTS = 32;

/** The queue's arrays for a ring of some number of slots. */
export interface Slots {
  /** The number, or the packed string length and pool offset (tags.ts); 0 for a boolean. */
  values: Float64Array;
  ats: Float64Array;
  seqs: Float64Array | null;
  resources: Uint32Array;
  /** The text entries' resource ids: NO_ENTRY of them, whatever the slots. */
  entryIds: Uint32Array;
  tags: Uint8Array;
  pool: Uint8Array;
}

export class QueueBuffer {
  private readonly memory: QueueMemory | null;
  /** The region the arrays are in; null: a buffer of the queue's own. */
  private region: Uint8Array | null = null;
  /** The region `lay` left, until `giveBack`. */
  private left: Uint8Array | null = null;

  constructor(memory: QueueMemory | undefined, private readonly withSeq: boolean, private readonly poolBytes: number) {
    this.memory = memory ?? null;
  }

  /** The host lends the memory: the ring grows and shrinks. */
  get lent(): boolean {
    return this.memory !== null;
  }

  /** A resource id, a tag, a value and a time per slot, a sequence number with durable storage, the pool and the entries. */
  bytesFor(slots: number): number {
    return slots * (4 + 1 + 8 + 8 + (this.withSeq ? 8 : 0)) + this.poolBytes + NO_ENTRY * 4;
  }

  /**
   * The arrays of a ring of `n` slots, in a new buffer: one ArrayBuffer (and on Node one allocation) a
   * queue, not seven. Throws RangeError on lent memory too small or not at a multiple of 8 bytes.
   */
  lay(n: number): Slots {
    const bytes = this.bytesFor(n);
    const region = this.memory === null ? null : this.memory.take(bytes);
    if (region !== null && (region.byteLength < bytes || region.byteOffset % 8 !== 0)) {
      throw new RangeError('queue memory must hold ' + bytes + ' bytes from an offset that is a multiple of 8');
    }
    this.left = this.region;
    this.region = region;
    const buffer = region === null ? new ArrayBuffer(bytes) : region.buffer;
    let at = region === null ? 0 : region.byteOffset;
    const values = new Float64Array(buffer, at, n);
    const ats = new Float64Array(buffer, (at += 8 * n), n);
    const seqs = this.withSeq ? new Float64Array(buffer, (at += 8 * n), n) : null;
    const resources = new Uint32Array(buffer, (at += 8 * n), n);
    const entryIds = new Uint32Array(buffer, (at += 4 * n), NO_ENTRY);
    const tags = new Uint8Array(buffer, (at += 4 * NO_ENTRY), n);
    return { values, ats, seqs, resources, entryIds, tags, pool: new Uint8Array(buffer, at + n, this.poolBytes) };
  }

  /** Gives the host back the region the last `lay` left, once the samples were copied out of it. */
  giveBack(): void {
    const left = this.left;
    this.left = null;
    if (left !== null) (this.memory as QueueMemory).give(left);
  }
}

/**
 * The ring that a queue of `length` samples in `slots` lent slots shrinks to, once three quarters of it
 * are empty: the least of the doubling that holds twice what is queued, so that one more burst like it
 * fits; `slots` when it stays.
 */
export function shrunk(length: number, slots: number): number {
  if (4 * length > slots) return slots;
  let n = FIRST_SLOTS;
  while (n < 2 * length) n *= 2;
  return Math.min(n, slots);
}

/** Copies the samples at positions [first, end) from a ring of `was` slots to one of `n`: each to slot position % n. */
export function copySamples(from: Slots, was: number, to: Slots, n: number, first: number, end: number): void {
  for (let p = first; p < end; p++) {
    const a = p % was, b = p % n;
    to.values[b] = from.values[a];
    to.ats[b] = from.ats[a];
    if (from.seqs !== null) (to.seqs as Float64Array)[b] = from.seqs[a];
    to.resources[b] = from.resources[a];
    to.tags[b] = from.tags[a];
  }
  to.entryIds.set(from.entryIds);
  to.pool.set(from.pool);
}
