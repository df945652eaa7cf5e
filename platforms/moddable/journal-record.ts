// The records of the flash queue's journal (flash-queue.ts): binary and little-endian, so that a sample
// costs 13 bytes of flash (a boolean), 21 (a number) or 17 and its UTF-8 (a string), and reading one back allocates only its own bytes. A record is its kind
// (u8) and sequence number (f64), then for a sample its resource (u32) and value: a number as f64,
// false and true as nothing, a string as its UTF-8 length (u32) and bytes. An acknowledgement has no more.
import type { SampleValue } from '../../src/core/host';
import { utf8Length, utf8Read, utf8Write } from '../../src/core/utf8';
import type { FileHandle } from './sdk';

const NUMBER = 1, FALSE = 2, TRUE = 3, STRING = 4;
export const ACK = 5;

/** Kind and sequence number. */
const HEAD_BYTES = 9;
const RESOURCE_BYTES = 4;

/** A sample's record. */
export function sampleRecord(seq: number, resource: number, value: SampleValue): ArrayBuffer {
  const text = typeof value === 'string' ? utf8Length(value) : -1;
  const bytes = HEAD_BYTES + RESOURCE_BYTES + (typeof value === 'number' ? 8 : text >= 0 ? 4 + text : 0);
  const record = new ArrayBuffer(bytes);
  const view = new DataView(record);
  view.setUint8(0, typeof value === 'number' ? NUMBER : typeof value === 'string' ? STRING : value ? TRUE : FALSE);
  view.setFloat64(1, seq, true);
  view.setUint32(HEAD_BYTES, resource, true);
  if (typeof value === 'number') view.setFloat64(HEAD_BYTES + RESOURCE_BYTES, value, true);
  else if (text >= 0) {
    view.setUint32(HEAD_BYTES + RESOURCE_BYTES, text, true);
    utf8Write(value as string, new Uint8Array(record, HEAD_BYTES + RESOURCE_BYTES + 4), 0);
  }
  return record;
}

/** An acknowledgement: every sample up to `seq` is finished. */
export function ackRecord(seq: number): ArrayBuffer {
  const record = new ArrayBuffer(HEAD_BYTES);
  const view = new DataView(record);
  view.setUint8(0, ACK);
  view.setFloat64(1, seq, true);
  return record;
}

/** One record as read back: `value` is undefined for an acknowledgement. */
export interface JournalEntry {
  kind: number;
  seq: number;
  resource: number;
  value: SampleValue | undefined;
  /** Its size in the file. */
  bytes: number;
}

/**
 * Reads the record at the file's position, or null where none is whole: the end of the file, or the
 * torn tail of a write that a crash cut short (a filesystem without atomic commits), or bytes that are
 * not a record. The position is then left where that record began.
 */
export function readRecord(file: FileHandle, length: number): JournalEntry | null {
  const at = file.position;
  if (length - at < HEAD_BYTES) return null;
  const head = new DataView(file.read(ArrayBuffer, HEAD_BYTES));
  const kind = head.getUint8(0);
  const seq = head.getFloat64(1, true);
  if (kind < NUMBER || kind > ACK || !Number.isSafeInteger(seq) || seq < 0) return back(file, at);
  const entry: JournalEntry = { kind, seq, resource: 0, value: undefined, bytes: HEAD_BYTES };
  if (kind === ACK) return entry;
  const fixed = kind === NUMBER ? RESOURCE_BYTES + 8 : kind === STRING ? RESOURCE_BYTES + 4 : RESOURCE_BYTES;
  if (length - file.position < fixed) return back(file, at);
  const body = new DataView(file.read(ArrayBuffer, fixed));
  entry.resource = body.getUint32(0, true);
  entry.bytes += fixed;
  if (kind === NUMBER) entry.value = body.getFloat64(RESOURCE_BYTES, true);
  else if (kind !== STRING) entry.value = kind === TRUE;
  else {
    const text = body.getUint32(RESOURCE_BYTES, true);
    if (length - file.position < text) return back(file, at);
    entry.value = text === 0 ? '' : utf8Read(new Uint8Array(file.read(ArrayBuffer, text)), 0, text);
    entry.bytes += text;
  }
  return entry;
}

function back(file: FileHandle, at: number): null {
  file.position = at;
  return null;
}
