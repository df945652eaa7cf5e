// The durable queue's commonest record read without JSON.parse: a sample whose value is a number or a
// boolean, its body exactly as log-record.ts writes it, {"s":seq,"r":resource,"v":value} with ,"t":time
// or not. A backlog is read back as fast as the service takes it (a hundred thousand samples a second),
// and JSON.parse was most of the cost of a record. Anything else (a string value, a checkpoint, a body
// another writer spelt differently) is left to JSON.parse: `plainSample` then returns null.
import type { SampleValue } from '../../../src/core/host/host';

const SEQ = Buffer.from('{"s":');
const RESOURCE = Buffer.from(',"r":');
const VALUE = Buffer.from(',"v":');
const TIME = Buffer.from(',"t":');
const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');
const CLOSE = 0x7d;
const MINUS = 0x2d;
/** More digits than this may not be a safe integer: JSON.parse and its check decide. */
const MAX_DIGITS = 15;
/** Powers of ten a double holds exactly. */
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);

export interface PlainSample {
  kind: 'sample';
  seq: number;
  resource: number;
  value: SampleValue;
  time: number;
}

/**
 * The sample in `bytes[start, end)`, a body whose checksum matched, written into `into`; null when it is not
 * of the plain form.
 */
export function plainSample(bytes: Buffer, start: number, end: number, into: PlainSample): PlainSample | null {
  let i = start;
  if (!at(bytes, i, SEQ)) return null;
  const seq = whole(bytes, (i += SEQ.length), end);
  if (seq < 0 || !at(bytes, (i = wholeEnd), RESOURCE)) return null;
  const resource = whole(bytes, (i += RESOURCE.length), end);
  if (resource < 0 || !at(bytes, (i = wholeEnd), VALUE)) return null;
  i += VALUE.length;
  let value: SampleValue;
  if (at(bytes, i, TRUE)) {
    value = true;
    i += TRUE.length;
  } else if (at(bytes, i, FALSE)) {
    value = false;
    i += FALSE.length;
  } else {
    value = numberAt(bytes, i, end);
    if (!Number.isFinite(value)) return null;
    i = wholeEnd;
  }
  let time = NaN;
  if (at(bytes, i, TIME)) {
    i += TIME.length;
    const negative = bytes[i] === MINUS;
    const t = whole(bytes, negative ? i + 1 : i, end);
    if (t < 0) return null;
    time = negative ? -t : t;
    i = wholeEnd;
  }
  if (i !== end - 1 || bytes[i] !== CLOSE) return null;
  into.seq = seq;
  into.resource = resource;
  into.value = value;
  into.time = time;
  return into;
}

/**
 * The number JSON.stringify wrote at `i` (sets `wholeEnd`). A plain decimal of at most 15 digits is n / 10^k
 * of two doubles that hold n and 10^k exactly, and that quotient is rounded once, to the double nearest the
 * decimal, as JSON.parse rounds it; anything else (an exponent, more digits) is read by Number, which reads
 * what JSON.stringify wrote as JSON.parse does.
 */
function numberAt(bytes: Buffer, i: number, end: number): number {
  let j = i;
  const negative = bytes[j] === MINUS;
  if (negative) j++;
  let n = 0;
  let digits = 0;
  let scale = -1;
  for (; j < end; j++) {
    const b = bytes[j];
    if (b >= 0x30 && b <= 0x39) {
      n = n * 10 + (b - 0x30);
      digits++;
      if (scale >= 0) scale++;
    } else if (b === 0x2e && scale < 0) scale = 0;
    else break;
  }
  if (digits > MAX_DIGITS || scale >= POW10.length || (j < end && (bytes[j] === 0x65 || bytes[j] === 0x45))) {
    let k = j;
    while (k < end && isNumberByte(bytes[k])) k++;
    wholeEnd = k;
    return Number(bytes.toString('latin1', i, k));
  }
  wholeEnd = j;
  if (digits === 0) return NaN;
  const v = scale > 0 ? n / POW10[scale] : n;
  return negative ? -v : v;
}

/** Where the digits `whole` or the number `numberAt` read last end. */
let wholeEnd = 0;

/** The integer of the digits at `i` (sets `wholeEnd`), or -1 when there are none or too many. */
function whole(bytes: Buffer, i: number, end: number): number {
  let n = 0;
  let j = i;
  for (; j < end && bytes[j] >= 0x30 && bytes[j] <= 0x39; j++) n = n * 10 + (bytes[j] - 0x30);
  wholeEnd = j;
  return j === i || j - i > MAX_DIGITS ? -1 : n;
}

function at(bytes: Buffer, i: number, text: Buffer): boolean {
  if (i + text.length > bytes.length) return false;
  for (let k = 0; k < text.length; k++) if (bytes[i + k] !== text[k]) return false;
  return true;
}

/** A byte of a JSON number: a digit, a sign, a decimal point or an exponent. */
function isNumberByte(b: number): boolean {
  return (b >= 0x30 && b <= 0x39) || b === MINUS || b === 0x2b || b === 0x2e || b === 0x65 || b === 0x45;
}
