// Modbus registers to readings and back: 16-bit words, a 32-bit value across two of them in the device's
// word order, then scale and offset (reading = raw × scale + offset; a write does the inverse).
import type { RegisterType, WordOrder } from './config';

/** How many 16-bit registers a value of `type` takes. */
export function wordsOf(type: RegisterType): 1 | 2 {
  return type === 'int16' || type === 'uint16' ? 1 : 2;
}

/** The raw value in `words` (as read, wire order), before scale and offset. */
export function decodeWords(words: readonly number[], type: RegisterType, order: WordOrder): number {
  const view = new DataView(new ArrayBuffer(4));
  if (wordsOf(type) === 1) {
    view.setUint16(0, words[0]);
    return type === 'int16' ? view.getInt16(0) : view.getUint16(0);
  }
  const [hi, lo] = order === 'high-first' ? [words[0], words[1]] : [words[1], words[0]];
  view.setUint16(0, hi);
  view.setUint16(2, lo);
  if (type === 'int32') return view.getInt32(0);
  if (type === 'uint32') return view.getUint32(0);
  // A float32 holds about 7 significant digits: what lies beyond them is noise of the conversion.
  return Number(view.getFloat32(0).toPrecision(7));
}

/** The words (wire order) that hold `raw` as `type`; throws when it does not fit. */
export function encodeWords(raw: number, type: RegisterType, order: WordOrder): number[] {
  const view = new DataView(new ArrayBuffer(4));
  const int = type !== 'float32';
  const value = int ? Math.round(raw) : raw;
  const [lo, hi] = RANGE[type];
  if (!Number.isFinite(value) || value < lo || value > hi) throw new RangeError(`${raw} does not fit a ${type}`);
  if (wordsOf(type) === 1) {
    view.setUint16(0, value & 0xffff);
    return [view.getUint16(0)];
  }
  if (type === 'float32') view.setFloat32(0, value);
  else view.setUint32(0, value >>> 0);
  const words = [view.getUint16(0), view.getUint16(2)];
  return order === 'high-first' ? words : [words[1], words[0]];
}

const RANGE: Record<RegisterType, [number, number]> = {
  int16: [-32768, 32767],
  uint16: [0, 65535],
  int32: [-2147483648, 2147483647],
  uint32: [0, 4294967295],
  float32: [-3.4028234663852886e38, 3.4028234663852886e38],
};

/** A reading from the raw value: scale and offset, rounded to float32-free noise (12 significant digits). */
export function scaled(raw: number, scale: number, offset: number): number {
  const v = raw * scale + offset;
  return Number.isInteger(v) ? v : Number(v.toPrecision(12));
}
