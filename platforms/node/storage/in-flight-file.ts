// The batch of the operation-4 request that is out (QueueStorage.sending), kept beside the durable
// queue's log in a file of its own, `dir/in-flight`: one line, the CRC-32 of its JSON body (8 hex
// digits), a space, the body and `\n`, rewritten in place at offset 0 before every request. Each write is
// one positional writeSync of a few dozen bytes, handed to the OS before the request goes, so it
// survives kill -9; it is not synced (one flash write per batch would cost more than it saves), so
// after a power cut it may be older than the log, or torn: a record that does not match the restored
// samples is ignored (the core checks), and one that fails its checksum reads as none. Either way the
// batch goes again as it did before this file existed.
import { closeSync, constants, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

import type { InFlight } from '../../../src/core/host/host';
import { crc32 } from './crc32';

export const IN_FLIGHT_NAME = 'in-flight';

interface Body {
  f: number;
  l: number;
  n: number;
  r: number[];
  b: number[];
}

export class InFlightFile {
  private readonly path: string;

  constructor(dir: string) {
    this.path = join(dir, IN_FLIGHT_NAME);
  }

  /** Replaces the record with `batch`; throws if it could not be written. */
  write(batch: Readonly<InFlight>): void {
    const body: Body = { f: batch.firstSeq, l: batch.lastSeq, n: batch.count, r: [], b: [] };
    for (let j = 0; j < batch.size; j++) {
      body.r.push(batch.resources[j]);
      body.b.push(batch.lastIds[j]);
    }
    const json = Buffer.from(JSON.stringify(body));
    const line = Buffer.alloc(json.length + 10);
    line.write(crc32(json).toString(16).padStart(8, '0') + ' ');
    json.copy(line, 9);
    line[line.length - 1] = 0x0a;
    // Written over the last record, not truncated first (a kill between the two would leave none): what a
    // longer one leaves behind comes after this one's newline, and is ignored.
    const fd = openSync(this.path, constants.O_WRONLY | constants.O_CREAT);
    try {
      writeSync(fd, line, 0, line.length, 0);
    } finally {
      closeSync(fd);
    }
  }

  /** The record last written, or null when there is none or it is damaged. */
  read(): InFlight | null {
    let bytes: Buffer;
    try {
      bytes = readFileSync(this.path);
    } catch {
      return null;
    }
    const end = bytes.indexOf(0x0a);
    if (end < 10 || bytes[8] !== 0x20) return null;
    const digits = bytes.toString('latin1', 0, 8);
    if (!/^[0-9a-f]{8}$/.test(digits) || parseInt(digits, 16) !== crc32(bytes, 9, end)) return null;
    try {
      return inFlightOf(JSON.parse(bytes.toString('utf8', 9, end)) as Body);
    } catch {
      return null;
    }
  }
}

function inFlightOf(body: Body): InFlight | null {
  const whole = (x: unknown): boolean => Number.isSafeInteger(x);
  if (!whole(body.f) || !whole(body.l) || !whole(body.n) || !Array.isArray(body.r) || !Array.isArray(body.b) || body.r.length !== body.b.length) return null;
  if (!body.r.every(whole) || !body.b.every(whole)) return null;
  return { firstSeq: body.f, lastSeq: body.l, count: body.n, size: body.r.length, resources: Uint32Array.from(body.r), lastIds: Float64Array.from(body.b) };
}
