// The flash queue's state beside its segments (flash-queue.ts), in one small file: the sequence number up
// to which every sample is finished, and the batch of the operation-4 request that was out
// (QueueStorage.sending), so that a reboot reads that batch back instead of sending it again blind. It is
// written only while the queue holds samples on flash, once per batch sent from there, and at close:
// while the service answers it is not written at all. Binary, little-endian: "FAO1" (u32), the finished
// sequence number (f64), the batch's first and last sequence number (f64), its count (u32; 0: none), the
// entries (u16), their resource ids (u32 each) and newest feed ids (f64 each), and the CRC-32 of all of
// it (u32). It is written over the last one at offset 0: littlefs commits it whole at close; a file system
// without that commit can tear it, and a record that fails its checksum reads as none.
import type { InFlight } from '../../../src/core/host/host';
import type { FileClass } from './file-module';

/** "FAO1" read as a little-endian u32. */
const MARK = 0x314f4146;
const FIXED_BYTES = 4 + 8 + 8 + 8 + 4 + 2;

export interface QueueState {
  /** Every sample up to this sequence number is finished; -1 for none. */
  finished: number;
  batch: InFlight | null;
}

export class InFlightFile {
  constructor(
    private readonly File: FileClass,
    readonly path: string,
  ) {}

  get exists(): boolean {
    return this.File.exists(this.path);
  }

  /** Replaces the state with `finished` and `batch` (null: no batch out); throws if it could not be written. */
  write(finished: number, batch: Readonly<InFlight> | null): void {
    const size = batch === null ? 0 : batch.size;
    const view = new DataView(new ArrayBuffer(FIXED_BYTES + size * 12 + 4));
    view.setUint32(0, MARK, true);
    view.setFloat64(4, finished, true);
    view.setFloat64(12, batch === null ? 0 : batch.firstSeq, true);
    view.setFloat64(20, batch === null ? 0 : batch.lastSeq, true);
    view.setUint32(28, batch === null ? 0 : batch.count, true);
    view.setUint16(32, size, true);
    for (let j = 0; j < size; j++) {
      view.setUint32(FIXED_BYTES + j * 4, (batch as InFlight).resources[j], true);
      view.setFloat64(FIXED_BYTES + size * 4 + j * 8, (batch as InFlight).lastIds[j], true);
    }
    const end = view.byteLength - 4;
    view.setUint32(end, crc32(view, end), true);
    const file = new this.File(this.path, true);
    try {
      file.position = 0;
      file.write(view.buffer);
    } finally {
      file.close();
    }
  }

  /** The state written last, or null when there is none or it is damaged. */
  read(): QueueState | null {
    if (!this.File.exists(this.path)) return null;
    const file = new this.File(this.path);
    let view: DataView;
    try {
      if (file.length < FIXED_BYTES + 4) return null;
      view = new DataView(file.read(ArrayBuffer));
    } finally {
      file.close();
    }
    const size = view.getUint16(32, true);
    const end = FIXED_BYTES + size * 12;
    if (view.getUint32(0, true) !== MARK || end + 4 > view.byteLength || view.getUint32(end, true) !== crc32(view, end)) return null;
    const finished = view.getFloat64(4, true);
    const count = view.getUint32(28, true);
    if (!Number.isSafeInteger(finished)) return null;
    if (count === 0) return { finished, batch: null };
    const batch: InFlight = {
      firstSeq: view.getFloat64(12, true),
      lastSeq: view.getFloat64(20, true),
      count,
      size,
      resources: new Uint32Array(size),
      lastIds: new Float64Array(size),
    };
    for (let j = 0; j < size; j++) {
      batch.resources[j] = view.getUint32(FIXED_BYTES + j * 4, true);
      batch.lastIds[j] = view.getFloat64(FIXED_BYTES + size * 4 + j * 8, true);
    }
    return { finished, batch };
  }

  remove(): void {
    if (this.File.exists(this.path)) this.File.delete(this.path);
  }
}

/** CRC-32 (IEEE 802.3, zlib's) of the first `end` bytes, bit by bit: a table would be one more object in RAM, for a hundred bytes a batch. */
function crc32(view: DataView, end: number): number {
  let c = 0xffffffff;
  for (let i = 0; i < end; i++) {
    c ^= view.getUint8(i);
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}
