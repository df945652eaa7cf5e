// The records of the flash queue's segment files (flash-queue.ts): binary, little-endian and small, so
// that a day of readings fits beside the image (docs/moddable.md, "Flash"). A segment begins with a header:
// "FAQ2" (u32), the sequence number of its first sample (f64), and how far the wall clock was ahead of the
// host's monotonic clock when the segment was begun (f64; NaN when the device knew no wall time then).
// Records follow. Each begins with a byte whose top three bits are its kind and whose low five bits name
// one of the segment's 32 resource slots:
// - a sample: that byte, its time as u16 milliseconds after the previous record's, then its value: f64 (a
//   number: 11 bytes in all), i32 (a number that is a 32-bit integer other than -0: 7 bytes), nothing
//   (false and true: 3 bytes), or u32 UTF-8 length and bytes (a string). Its sequence number follows the
//   previous sample's: a segment holds consecutive samples only.
// - a resource: the slot's resource id (u32), before the slot's first sample (5 bytes).
// - a time: a time in full (f64; NaN for none), before a sample whose time is not 0 to 65,535 ms after the
//   previous record's (9 bytes). A segment's time starts at 0.
// Times are kept to the millisecond. Writing a number or a boolean allocates nothing, and neither does
// reading one back.
import type { SampleValue } from '../../../src/core/host/host';
import { utf8Length, utf8Read, utf8Write } from '../../../src/core/wire/utf8';
import type { FileHandle } from './file-module';

/** "FAQ2" read as a little-endian u32. */
const MARK = 0x32514146;
export const HEADER_BYTES = 20;
const F64 = 0, I32 = 1, FALSE = 2, TRUE = 3, STRING = 4, RESOURCE = 5, TIME = 6;
const SLOTS = 32;
const SLOT_MASK = SLOTS - 1;
/** The kind byte and the time of a sample. */
const SAMPLE_HEAD = 3;
const MAX_DELTA = 65535;

/** A number the i32 record keeps exactly. */
function isInt32(v: number): boolean {
  return (v | 0) === v && (v !== 0 || 1 / v > 0);
}

/**
 * Writes one segment's records to its file, keeping the resource slots and the time they refer to. A
 * record goes out as its bytes, a number each (`FileHandle.write`), taken apart in one scratch buffer:
 * writing a number or a boolean allocates nothing.
 */
export class RecordWriter {
  /** The resource id of each slot taken in the segment being written (0: free). */
  private readonly slots = new Uint32Array(SLOTS);
  private slotsUsed = 0;
  /** The time of the last record, in whole milliseconds (NaN: none). */
  private t = 0;
  private readonly scratch = new DataView(new ArrayBuffer(8));

  /** Writes the header of a new segment whose first sample is `firstSeq`; `wall` as the header says. */
  begin(file: FileHandle, firstSeq: number, wall: number): void {
    this.slots.fill(0);
    this.slotsUsed = 0;
    this.t = 0;
    const s = this.scratch;
    s.setUint32(0, MARK, true);
    file.write(s.getUint8(0), s.getUint8(1), s.getUint8(2), s.getUint8(3));
    this.eight(file, firstSeq);
    this.eight(file, wall);
  }

  /** The bytes `sample` would write; -1 when the segment has no slot left for `resource`. */
  bytesFor(resource: number, value: SampleValue, at: number): number {
    let n = SAMPLE_HEAD + (typeof value === 'number' ? (isInt32(value) ? 4 : 8) : typeof value === 'string' ? 4 + utf8Length(value) : 0);
    if (this.slotOf(resource) < 0) {
      if (this.slotsUsed === SLOTS) return -1;
      n += 5;
    }
    if (this.delta(Math.round(at)) < 0) n += 9;
    return n;
  }

  /** Writes a sample (with its resource's and its time's records when it needs them); `bytesFor` was not -1. */
  sample(file: FileHandle, resource: number, value: SampleValue, at: number): void {
    const s = this.scratch;
    let slot = this.slotOf(resource);
    if (slot < 0) {
      slot = this.slotsUsed++;
      this.slots[slot] = resource;
      s.setUint32(0, resource, true);
      file.write((RESOURCE << 5) | slot, s.getUint8(0), s.getUint8(1), s.getUint8(2), s.getUint8(3));
    }
    const t = Math.round(at);
    let dt = this.delta(t);
    if (dt < 0) {
      file.write(TIME << 5);
      this.eight(file, t);
      dt = 0;
    }
    this.t = t;
    const lo = dt & 0xff, hi = dt >> 8;
    if (typeof value === 'number') {
      if (isInt32(value)) {
        s.setInt32(0, value, true);
        file.write((I32 << 5) | slot, lo, hi, s.getUint8(0), s.getUint8(1), s.getUint8(2), s.getUint8(3));
      } else {
        s.setFloat64(0, value, true);
        file.write((F64 << 5) | slot, lo, hi, s.getUint8(0), s.getUint8(1), s.getUint8(2), s.getUint8(3), s.getUint8(4), s.getUint8(5), s.getUint8(6), s.getUint8(7));
      }
    } else if (typeof value === 'boolean') {
      file.write(((value ? TRUE : FALSE) << 5) | slot, lo, hi);
    } else {
      // A string allocates anyway: its record is a buffer of its own.
      const bytes = utf8Length(value);
      const v = new DataView(new ArrayBuffer(SAMPLE_HEAD + 4 + bytes));
      v.setUint8(0, (STRING << 5) | slot);
      v.setUint16(1, dt, true);
      v.setUint32(SAMPLE_HEAD, bytes, true);
      utf8Write(value, new Uint8Array(v.buffer), SAMPLE_HEAD + 4);
      file.write(v.buffer);
    }
  }

  /** A float64's eight bytes. */
  private eight(file: FileHandle, v: number): void {
    const s = this.scratch;
    s.setFloat64(0, v, true);
    file.write(s.getUint8(0), s.getUint8(1), s.getUint8(2), s.getUint8(3), s.getUint8(4), s.getUint8(5), s.getUint8(6), s.getUint8(7));
  }

  private slotOf(resource: number): number {
    for (let i = 0; i < this.slotsUsed; i++) if (this.slots[i] === resource) return i;
    return -1;
  }

  /** The u16 a sample at `t` carries, or -1 when it needs a time record first. */
  private delta(t: number): number {
    if (t !== t) return this.t !== this.t ? 0 : -1;
    const d = t - this.t;
    return d >= 0 && d <= MAX_DELTA ? d : -1;
  }
}

/** Reads a segment's records in order, keeping its slots and its time. */
export class RecordReader {
  private readonly slots = new Uint32Array(SLOTS);
  private t = 0;
  /** From the header `header` read last. */
  firstSeq = 0;
  wall = 0;
  /** The record `next` read last is a sample: this one, its time `at` (ms of the run that wrote it). */
  sample = false;
  resource = 0;
  value: SampleValue = 0;
  at = 0;

  /** Reads the header at `offset`, and starts the segment's slots and time: false when it is not a header. */
  header(view: DataView, offset: number): boolean {
    if (view.getUint32(offset, true) !== MARK) return false;
    const seq = view.getFloat64(offset + 4, true);
    if (!Number.isSafeInteger(seq) || seq < 0) return false;
    this.firstSeq = seq;
    this.wall = view.getFloat64(offset + 12, true);
    this.slots.fill(0);
    this.t = 0;
    return true;
  }

  /**
   * Reads the record at `offset`, ending no later than `end`: its length; a negative number, minus the
   * bytes it needs, when it is not whole before `end`; 0 when the bytes are not a record (damage). A
   * sample's time counts only once it is taken (`take`).
   */
  next(view: DataView, offset: number, end: number): number {
    const room = end - offset;
    if (room < 1) return -1;
    const head = view.getUint8(offset);
    const kind = head >> 5;
    const slot = head & SLOT_MASK;
    if (kind === RESOURCE) {
      if (room < 5) return -5;
      const resource = view.getUint32(offset + 1, true);
      if (resource === 0) return 0;
      this.slots[slot] = resource;
      this.sample = false;
      return 5;
    }
    if (kind === TIME) {
      if (room < 9) return -9;
      const t = view.getFloat64(offset + 1, true);
      if (slot !== 0 || (t === t && !Number.isSafeInteger(t))) return 0;
      this.t = t;
      this.sample = false;
      return 9;
    }
    if (kind > STRING) return 0;
    let length = SAMPLE_HEAD + (kind === F64 ? 8 : kind === I32 || kind === STRING ? 4 : 0);
    if (room < length) return -length;
    const resource = this.slots[slot];
    if (resource === 0) return 0;
    const at = offset + SAMPLE_HEAD;
    if (kind === F64) {
      const v = view.getFloat64(at, true);
      if (v - v !== 0) return 0;
      this.value = v;
    } else if (kind === I32) this.value = view.getInt32(at, true);
    else if (kind === STRING) {
      const bytes = view.getUint32(at, true);
      length += bytes;
      if (room < length) return -length;
      this.value = bytes === 0 ? '' : utf8Read(new Uint8Array(view.buffer, view.byteOffset), at + 4, bytes);
    } else this.value = kind === TRUE;
    this.sample = true;
    this.resource = resource;
    this.at = this.t + view.getUint16(offset + 1, true);
    return length;
  }

  /** The sample `next` read is taken: its time is the one the next record's is counted from. */
  take(): void {
    this.t = this.at;
  }
}
