// The string pool: a byte ring that holds the UTF-8 of the queued string samples in queue order with no
// gap. The oldest string starts `used` bytes before the tail, so removing samples from the queue's head
// frees bytes in order, and an eviction behind locked samples slides the locked strings over the freed
// bytes (`slide`). Each string sample keeps its length and offset in its value (tags.ts).
import { asciiRead, utf8Read, utf8Write } from '../wire/utf8';
import { LENGTH_UNIT, lengthOf, offsetOf } from './tags';

export class StringPool {
  /** The bytes: a view in the queue's buffer, replaced when the ring is resized (ring.ts). */
  bytes: Uint8Array;
  /** Their count: a typed array's `length` is a getter call on XS, a field is not. */
  readonly size: number;
  /** Bytes the queued strings take. */
  used = 0;
  /** Whether the last string `add` wrote is all ASCII. */
  ascii = false;
  /** Next free byte. */
  private tail = 0;

  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
    this.size = bytes.length;
  }

  /** Writes `s`, of `length` UTF-8 bytes, at the tail, and returns its packed value; `ascii` says whether it is all ASCII. */
  add(s: string, length: number): number {
    const tail = this.tail;
    this.ascii = utf8Write(s, this.bytes, tail);
    this.tail = this.at(tail + length);
    this.used += length;
    return length * LENGTH_UNIT + tail;
  }

  /** The string of a packed value, decoded: a new string each call. */
  read(packed: number, ascii: boolean): string {
    return (ascii ? asciiRead : utf8Read)(this.bytes, offsetOf(packed), lengthOf(packed));
  }

  /** The packed value of a string that `slide` moved `by` bytes forward. */
  moved(packed: number, by: number): number {
    return lengthOf(packed) * LENGTH_UNIT + this.at(offsetOf(packed) + by);
  }

  /**
   * The strings of the locked samples, `lockedBytes`, start the pool and `freed` bytes of evicted ones
   * came next: the locked bytes move `freed` bytes forward over them, so the pool stays gapless and in
   * order (the caller then frees the `freed` bytes). Costs the locked bytes (a batch's at most).
   */
  slide(freed: number, lockedBytes: number): void {
    const start = this.at(this.tail + this.size - this.used);
    const pool = this.bytes;
    if (start + freed + lockedBytes <= this.size) {
      pool.copyWithin(start + freed, start, start + lockedBytes);
    } else {
      // Backwards, so a byte is read before the slide overwrites it.
      for (let b = lockedBytes - 1; b >= 0; b--) pool[this.at(start + freed + b)] = pool[this.at(start + b)];
    }
  }

  /** Pool index of byte `p` (0 ≤ p < 2 × pool size); correct for an empty pool too. */
  private at(p: number): number {
    return p >= this.size ? p - this.size : p;
  }
}
