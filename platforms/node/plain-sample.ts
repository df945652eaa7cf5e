// The durable queue's commonest record read without JSON.parse: a sample whose value is a number or a
// boolean, its body exactly as log-record.ts writes it, {"s":seq,"r":resource,"v":value} with ,"t":time
// or not. A backlog is read back as fast as the service takes it (a hundred thousand samples a second),
// and JSON.parse was most of the cost of a record. Anything else (a string value, a checkpoint, a body
// another writer spelt differently) is left to JSON.parse: `plainSample` then returns null.
import type { SampleValue } from '../../src/core/host';

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

export interface PlainSample {
  kind: 'sample';
  seq: number;
  resource: number;
  value: SampleValue;
  time: number;
}

/** The sample in `bytes[start, end)`, a body whose checksum matched; null when it is not of the plain form. */
export function plainSample(bytes: Buffer, start: number, end: number): PlainSample | null {
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
    let j = i;
    while (j < end && isNumberByte(bytes[j])) j++;
    // What JSON.stringify wrote of a finite number, Number reads back as JSON.parse does.
    value = j > i ? Number(bytes.toString('latin1', i, j)) : NaN;
    if (!Number.isFinite(value)) return null;
    i = j;
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
  return i === end - 1 && bytes[i] === CLOSE ? { kind: 'sample', seq, resource, value, time } : null;
}

/** Where the digits `whole` read last end. */
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
