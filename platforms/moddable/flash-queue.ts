// QueueStorage on the SDK's `file` module (littlefs on the ESP32), for an agent that writes only when it
// must: it sets `spillEvery` (src/core/host.ts), so routine operation writes nothing and flash is not
// worn while the service answers. The journal is one file of records (journal-record.ts) after a
// 4-byte mark, appended in bursts; a burst is committed when the file closes, which littlefs makes
// atomic (a power cut in the middle of a burst leaves the file as it was before it). Acknowledgements
// are records too, and the file is deleted once it holds no unacknowledged sample. It never grows past
// `maxBytes`: before it would, it is compacted into a new file renamed over the old one; if what is
// unacknowledged still does not fit, the oldest samples give way in the journal (they stay queued in
// memory, so only a crash before they are delivered loses them).
import type { QueueStorage, SampleValue, StoredVisit } from '../../src/core/host';
import { ACK, ackRecord, readRecord, sampleRecord } from './journal-record';
import type { JournalEntry } from './journal-record';
import type { FileClass, FileHandle } from './sdk';

export interface FlashQueueOptions {
  /** The journal's path, from the `file` module's root: `config.file.root + "feed-agent.q"`. */
  path: string;
  /** Once a flush failed, a burst is written every this many new samples (QueueStorage.spillEvery). Default 64. */
  spillEvery?: number;
  /** The journal's largest size in bytes (default 24 KiB: a compaction needs room for two copies). */
  maxBytes?: number;
  /** Where the journal says that it had to let samples go or found a damaged file. */
  log?: (message: string) => void;
}

export interface FlashQueueStats {
  /** Size of the journal file; 0 when there is none. */
  bytes: number;
  /** Writes committed since the journal was opened, bursts of samples and acknowledgements: the flash's wear. */
  writes: number;
  compactions: number;
  /** Samples the journal let go to stay within `maxBytes` (they remained queued in memory). */
  dropped: number;
}

export interface FlashQueue extends QueueStorage {
  readonly spillEvery: number;
  commit(): void;
  stats(): FlashQueueStats;
}

/** "FAQ1" read as a little-endian u32: the first 4 bytes of a journal of this format. */
const MARK = 0x31514146;
const MARK_BYTES = 4;
export const DEFAULT_SPILL_EVERY = 64;
const DEFAULT_MAX_BYTES = 24 * 1024;
const MIN_MAX_BYTES = 256;

export function openFlashQueue(files: FileClass, options: FlashQueueOptions): FlashQueue {
  const spillEvery = options.spillEvery ?? DEFAULT_SPILL_EVERY;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  if (!Number.isSafeInteger(spillEvery) || spillEvery < 1) throw new RangeError('spillEvery must be an integer ≥ 1');
  if (!Number.isSafeInteger(maxBytes) || maxBytes < MIN_MAX_BYTES) throw new RangeError('maxBytes must be an integer ≥ ' + MIN_MAX_BYTES);
  return new Journal(files, options.path, spillEvery, maxBytes, options.log);
}

class Journal implements FlashQueue {
  /** Open during a burst; closed (committed) otherwise. */
  private file: FileHandle | null = null;
  /** End of the last whole record, where the next burst is written; 0 when there is no file. */
  private size = 0;
  private lastSeq = -1;
  private ackedSeq = -1;
  private writes = 0;
  private compactions = 0;
  private dropped = 0;
  private dirty = false;

  constructor(
    private readonly files: FileClass,
    private readonly path: string,
    readonly spillEvery: number,
    private readonly bound: number,
    private readonly log?: (message: string) => void,
  ) {}

  load(visit: StoredVisit): number {
    const files = this.files;
    // What a compaction cut short left behind; the journal itself was not touched yet.
    if (files.exists(this.spare)) files.delete(this.spare);
    if (!files.exists(this.path)) return 0;
    const first = this.scan((entry) => {
      if (entry.kind === ACK) this.ackedSeq = Math.max(this.ackedSeq, entry.seq);
      else this.lastSeq = Math.max(this.lastSeq, entry.seq);
    });
    this.size = first.length;
    // The journal keeps no times: a restored sample has none on this run's clock.
    this.unacknowledged((entry) => void visit(entry.seq, entry.resource, entry.value as SampleValue, NaN));
    const damaged = first.whole < first.length;
    if (damaged) this.log?.('flash queue: ' + (first.length - first.whole) + ' bytes of ' + this.path + ' are not whole records; they are dropped');
    if (this.lastSeq <= this.ackedSeq) this.remove();
    else if (damaged) this.compact(0);
    return this.lastSeq + 1;
  }

  append(seq: number, resource: number, value: SampleValue): void {
    this.write(sampleRecord(seq, resource, value));
    if (seq > this.lastSeq) this.lastSeq = seq;
  }

  commit(): void {
    this.close();
  }

  ack(seq: number): void {
    if (seq <= this.ackedSeq) return;
    if (seq >= this.lastSeq) {
      this.remove();
    } else {
      this.write(ackRecord(seq));
      this.close();
    }
    this.ackedSeq = seq;
  }

  close(): void {
    const file = this.file;
    this.file = null;
    if (file === null) return;
    file.close();
    if (this.dirty) this.writes++;
    this.dirty = false;
  }

  stats(): FlashQueueStats {
    return { bytes: this.size, writes: this.writes, compactions: this.compactions, dropped: this.dropped };
  }

  private get spare(): string {
    return this.path + '~';
  }

  private write(record: ArrayBuffer): void {
    if (this.size + record.byteLength > this.bound) this.compact(record.byteLength);
    let file = this.file;
    if (file === null) {
      file = new this.files(this.path, true);
      this.file = file;
      if (file.length === 0) file.write(markRecord());
      // After the last whole write, not at the file's end: a write that failed may have left part of a
      // record there (a file system without littlefs's atomic commit at close, the lin build's).
      file.position = this.size > 0 ? this.size : file.length;
    }
    try {
      file.write(record);
    } catch (e) {
      // A failed write leaves the burst uncommitted; the next one reopens the file after the last whole record.
      this.file = null;
      this.dirty = false;
      file.close();
      throw e;
    }
    this.dirty = true;
    this.size = file.position;
  }

  private remove(): void {
    this.close();
    if (this.files.exists(this.path)) this.files.delete(this.path);
    this.size = 0;
  }

  /**
   * Rewrites the journal with only its unacknowledged samples, so that `incoming` more bytes fit; when
   * they would not, the oldest give way. Written to a spare file first, then renamed over the journal.
   */
  private compact(incoming: number): void {
    this.close();
    let kept = 0;
    this.unacknowledged((entry) => {
      kept += entry.bytes;
    });
    let excess = MARK_BYTES + kept + incoming - this.bound;
    let dropped = 0;
    const spare = new this.files(this.spare, true);
    try {
      spare.write(markRecord());
      this.unacknowledged((entry) => {
        if (excess > 0) {
          excess -= entry.bytes;
          dropped++;
        } else spare.write(sampleRecord(entry.seq, entry.resource, entry.value as SampleValue));
      });
      this.size = spare.position;
    } finally {
      spare.close();
    }
    if (!this.files.rename(this.spare, this.path)) throw new Error('flash queue: cannot replace ' + this.path);
    this.compactions++;
    if (dropped > 0) {
      this.dropped += dropped;
      this.log?.('flash queue: full at ' + this.bound + ' bytes; its ' + dropped + ' oldest samples are now kept in memory only');
    }
  }

  /** Visits the samples not yet acknowledged, oldest first, each once (a burst written twice repeats them). */
  private unacknowledged(visit: (entry: JournalEntry) => void): void {
    let newest = this.ackedSeq;
    this.scan((entry) => {
      if (entry.kind === ACK || entry.seq <= newest) return;
      newest = entry.seq;
      visit(entry);
    });
  }

  /** Reads every whole record; `whole` is where they end, short of `length` when the tail is damaged. */
  private scan(visit: (entry: JournalEntry) => void): { whole: number; length: number } {
    const file = new this.files(this.path);
    try {
      const length = file.length;
      if (length < MARK_BYTES || new DataView(file.read(ArrayBuffer, MARK_BYTES)).getUint32(0, true) !== MARK) return { whole: 0, length };
      for (let entry = readRecord(file, length); entry !== null; entry = readRecord(file, length)) visit(entry);
      return { whole: file.position, length };
    } finally {
      file.close();
    }
  }
}

function markRecord(): ArrayBuffer {
  const mark = new ArrayBuffer(MARK_BYTES);
  new DataView(mark).setUint32(0, MARK, true);
  return mark;
}
