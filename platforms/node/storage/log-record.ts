// The records of the durable queue's log, one a line:
//   <CRC-32 of BODY as 8 lowercase hex digits> <BODY>\n
// BODY is JSON: a sample {"s":seq,"r":resource,"v":value,"t":time} or a checkpoint
// {"a":ackedSeq,"n":nextSeq,"w":anchor}. A sample's `t` is its time on the monotonic clock of the run that
// wrote it, in whole ms; a checkpoint's `w` that run's wall clock at that clock's zero, which turns the
// times of the samples after it into wall times (sample-time.ts). Either may be missing (a sample without
// a time, a log of an earlier version): the reader then knows no time.
// Lines, not length-prefixed frames: after a damaged byte the reader picks up again at the next newline,
// whereas a damaged length field would hide the rest of the file. JSON escapes newlines inside strings.
import type { SampleValue } from '../../../src/core/host/host';

import { crc32 } from './crc32';
import { plainSample } from './plain-sample';
import type { PlainSample } from './plain-sample';

export type LogRecord =
  | { kind: 'sample'; seq: number; resource: number; value: SampleValue; time: number }
  | { kind: 'checkpoint'; acked: number; next: number; anchor: number };

export const NEWLINE = 0x0a;
const SPACE = 0x20;
const CRC_DIGITS = 8;

/**
 * Throws for a sample that would not read back as itself (JSON has no NaN or Infinity, for one). `time`:
 * whole ms, or NaN for none.
 */
export function encodeSample(seq: number, resource: number, value: SampleValue, time = NaN): Buffer {
  if (!isWhole(seq) || !isWhole(resource)) throw new RangeError('sequence number and resource must be integers ≥ 0');
  if (!isValue(value)) throw new RangeError('a sample value must be a finite number, a boolean or a string');
  return encodeLine(JSON.stringify(Number.isSafeInteger(time) ? { s: seq, r: resource, v: value, t: time } : { s: seq, r: resource, v: value }));
}

/** `anchor`: a whole number of ms, or NaN for none. */
export function encodeCheckpoint(acked: number, next: number, anchor = NaN): Buffer {
  return encodeLine(JSON.stringify(Number.isSafeInteger(anchor) ? { a: acked, n: next, w: anchor } : { a: acked, n: next }));
}

function encodeLine(body: string): Buffer {
  const bodyBytes = Buffer.byteLength(body);
  const line = Buffer.allocUnsafe(CRC_DIGITS + 1 + bodyBytes + 1);
  line.write(body, CRC_DIGITS + 1, 'utf8');
  const sum = crc32(line, CRC_DIGITS + 1, CRC_DIGITS + 1 + bodyBytes);
  line.write(sum.toString(16).padStart(CRC_DIGITS, '0'), 0, 'latin1');
  line[CRC_DIGITS] = SPACE;
  line[line.length - 1] = NEWLINE;
  return line;
}

export interface SegmentScan {
  /** Byte offset just past the last valid record (0 when there is none). */
  goodEnd: number;
  /** Damaged lines before `goodEnd`. */
  badLines: number;
  /** Damaged lines after `goodEnd`, a final fragment without its newline included: a torn tail. */
  tailLines: number;
}

/** Visits the valid records of one segment in file order, and says where the damage is. */
export function scanSegment(bytes: Buffer, visit: (record: LogRecord) => void): SegmentScan {
  let goodEnd = 0;
  let badBefore = 0;
  let bad = 0;
  let pos = 0;
  // Each pass consumes at least one byte, so the loop ends.
  while (pos < bytes.length) {
    const newline = bytes.indexOf(NEWLINE, pos);
    const end = newline === -1 ? bytes.length : newline;
    const record = newline === -1 ? null : decodeLine(bytes, pos, end);
    if (record === null) bad++;
    else {
      visit(record);
      goodEnd = end + 1;
      badBefore += bad;
      bad = 0;
    }
    pos = end + 1;
  }
  return { goodEnd, badLines: badBefore, tailLines: bad };
}

/**
 * The record of the line `bytes[start, end)` (its newline excluded), or null when it is damaged. A numeric
 * or boolean sample is written into `into` when given (a reader that takes its fields at once allocates
 * nothing for it), else into a new object.
 */
export function decodeLine(bytes: Buffer, start: number, end: number, into?: PlainSample): LogRecord | null {
  const bodyStart = start + CRC_DIGITS + 1;
  if (bodyStart >= end || bytes[start + CRC_DIGITS] !== SPACE) return null;
  if (hexAt(bytes, start) !== crc32(bytes, bodyStart, end)) return null;
  const plain = plainSample(bytes, bodyStart, end, into ?? { kind: 'sample', seq: 0, resource: 0, value: 0, time: NaN });
  if (plain !== null) return plain;
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString('utf8', bodyStart, end));
  } catch {
    return null;
  }
  return toRecord(body);
}

/** The checksum written at `start`: 8 lowercase hex digits; -1 when they are not. */
function hexAt(bytes: Buffer, start: number): number {
  let sum = 0;
  for (let i = start; i < start + CRC_DIGITS; i++) {
    const c = bytes[i];
    const digit = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;
    if (digit < 0) return -1;
    sum = sum * 16 + digit;
  }
  return sum;
}

// A body whose checksum matched but whose shape is wrong was written by something else: damage all the same.
function toRecord(body: unknown): LogRecord | null {
  if (typeof body !== 'object' || body === null) return null;
  const { s, r, v, t, a, n, w } = body as Record<string, unknown>;
  if (isWhole(s) && isWhole(r) && isValue(v)) return { kind: 'sample', seq: s, resource: r, value: v, time: Number.isSafeInteger(t) ? (t as number) : NaN };
  if (isWhole(a) && isWhole(n)) return { kind: 'checkpoint', acked: a, next: n, anchor: Number.isSafeInteger(w) ? (w as number) : NaN };
  return null;
}

function isWhole(x: unknown): x is number {
  return Number.isSafeInteger(x) && (x as number) >= 0;
}

function isValue(x: unknown): x is SampleValue {
  return typeof x === 'string' || typeof x === 'boolean' || (typeof x === 'number' && Number.isFinite(x));
}
