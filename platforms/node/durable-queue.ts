// The core's QueueStorage on disk: an append-only log of samples and ack checkpoints, cut into segment
// files that are deleted once everything in them is acknowledged. docs/durable-queue.md tells the format,
// the fsync policies and what a crash or a power cut can lose under each.
import {
  closeSync,
  fdatasync,
  fdatasyncSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  truncateSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import type { InFlight, QueueStorage, SampleValue, StoredVisit } from '../../src/core/host';
import { InFlightFile } from './in-flight-file';
import { encodeCheckpoint, encodeSample, scanSegment } from './log-record';
import { makeDirs } from './make-dirs';

/**
 * When written records are forced from the OS to the disk. A record is handed to the OS before `append`
 * returns under every policy, so killing the process loses nothing; the policy only matters for a power cut.
 * - `always`: fdatasync before `append`/`ack` returns. A power cut loses nothing that returned.
 * - `interval` (default): an fdatasync at most `fsyncIntervalMs` after a write, in the thread pool, or,
 *   before the write returns, once `fsyncRecords` records wait unsynced, whichever comes first. A power cut
 *   loses at most the records of about the last interval (and the sync's own few ms), never more than
 *   `fsyncRecords` of them.
 * - `never`: the OS writes back when it likes (Linux: within about 30 s). A power cut can lose anything not
 *   yet written back, and after one, acknowledged samples may come back (sent twice).
 */
export type FsyncPolicy = 'always' | 'interval' | 'never';

export interface DurableQueueOptions {
  /** Default `interval`. */
  fsync?: FsyncPolicy;
  /** With `interval`: the longest a written record stays unsynced. Default 1000 ms. */
  fsyncIntervalMs?: number;
  /**
   * With `interval`: the most records written since the last sync; the write that reaches it syncs before
   * it returns. Default 1000: at a high rate (a gateway's device) a power cut loses at most this many.
   */
  fsyncRecords?: number;
  /** A new segment file is begun when a sample would take the current one past this. Default 1 MiB. */
  segmentBytes?: number;
  /** An append that would take the log past this throws (the core then keeps the sample in memory only). Default 16 MiB. */
  maxBytes?: number;
}

export interface DurableQueueStats {
  segments: number;
  /** Bytes of all segment files. */
  bytes: number;
  /** Every sample up to this sequence number is acknowledged. */
  acked: number;
  nextSeq: number;
  /** Damaged records found when the queue was opened, torn tails included; each was dropped. */
  skippedRecords: number;
  /** Bytes of torn tail cut off the newest segment when the queue was opened. */
  truncatedBytes: number;
  syncs: number;
  /** Records (samples and checkpoints) handed to the OS since the last sync: what a power cut could take now. */
  unsynced: number;
  /** Acks that could not be written; their samples come back after a restart unless a later ack is written. */
  ackFailures: number;
  /** Why the queue refuses all writes since a failed fsync, or null. */
  failure: string | null;
}

export interface DurableQueue extends QueueStorage {
  /** Syncs (unless the policy is `never`) and closes the files; the directory may then be opened again. */
  close(): void;
  stats(): DurableQueueStats;
  /** Keeps the batch out in a request, for a read-back after a restart (in-flight-file.ts). */
  sending(batch: Readonly<InFlight>): void;
  inFlight(): InFlight | null;
}

type Settings = Required<DurableQueueOptions>;

const MIB = 1024 * 1024;
/** The name of a segment file; its number orders the segments. */
export const SEGMENT_NAME = /^seg-(\d{16})\.log$/;

interface Segment {
  id: number;
  path: string;
  bytes: number;
  /** Highest sample sequence number in the segment; 0 when it holds none. */
  maxSeq: number;
}

// Two queues appending to one directory would interleave their records: refuse the second one.
const openDirs = new Set<string>();

/**
 * Opens (creating if needed) the queue kept in `dir`: reads every segment, drops a torn tail, and starts a
 * new segment for this run's records. Throws on bad options, on a directory already open in this process,
 * or if the files cannot be read or created; damaged records never make it throw.
 */
export function openDurableQueue(dir: string, options: DurableQueueOptions = {}): DurableQueue {
  const settings = settingsOf(options);
  makeDirs(dir);
  const key = realpathSync(dir);
  if (openDirs.has(key)) throw new Error('durable queue directory is already open in this process: ' + dir);
  const queue = new SegmentLog(key, settings, () => openDirs.delete(key));
  openDirs.add(key);
  return queue;
}

class SegmentLog implements DurableQueue {
  private readonly segments: Segment[] = [];
  private fd = -1;
  private bytes = 0;
  private acked = 0;
  /** The highest ack known to be on disk: segments are deleted only up to it. */
  private durableAcked = 0;
  private next = 1;
  /** Records written since the queue opened, and how many of the first of them are synced. */
  private written = 0;
  private synced = 0;
  /** An fdatasync of the interval policy is running off the event loop. */
  private syncing = false;
  private dirDirty = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private failure: Error | null = null;
  private closed = false;
  private skipped = 0;
  private truncated = 0;
  private syncs = 0;
  private ackFailures = 0;
  /** The batch out in a request, in a file of its own beside the segments. */
  private readonly batchOut: InFlightFile;

  constructor(
    private readonly dir: string,
    private readonly settings: Settings,
    private readonly release: () => void,
  ) {
    this.batchOut = new InFlightFile(dir);
    const names = readdirSync(dir)
      .filter((name) => SEGMENT_NAME.test(name))
      .sort();
    names.forEach((name, i) => this.recover(name, i === names.length - 1));
    this.next = Math.max(this.next, this.acked + 1);
    this.durableAcked = this.acked;
    // Appends go to a segment of this run only, so a damaged older file is never written after.
    const last = this.segments[this.segments.length - 1];
    this.startSegment(last === undefined ? 1 : last.id + 1);
    this.afterWrite();
  }

  load(visit: StoredVisit): number {
    this.usable();
    let last = this.acked;
    for (const segment of this.segments) {
      scanSegment(readFileSync(segment.path), (record) => {
        // Strictly increasing: oldest first and never twice, whatever the files hold.
        if (record.kind === 'sample' && record.seq > last) {
          last = record.seq;
          visit(record.seq, record.resource, record.value, NaN);
        }
      });
    }
    return this.next;
  }

  append(seq: number, resource: number, value: SampleValue, _at?: number): void {
    this.usable();
    if (!Number.isSafeInteger(seq) || seq < this.next) {
      throw new RangeError('sequence number ' + seq + ' is not above the last one stored (' + (this.next - 1) + ')');
    }
    const line = encodeSample(seq, resource, value);
    // A segment holds at least one sample (maxSeq > 0: sequence numbers start at 1) before it rolls.
    const rolls = this.active().maxSeq > 0 && this.active().bytes + line.length > this.settings.segmentBytes;
    // A new segment begins with a checkpoint: it counts against the bound too.
    const needed = line.length + (rolls ? encodeCheckpoint(this.acked, this.next).length : 0);
    // Acknowledged segments may be waiting for a sync before they can go.
    if (this.bytes + needed > this.settings.maxBytes && this.settings.fsync !== 'never') this.sync();
    if (this.bytes + needed > this.settings.maxBytes) {
      throw new Error('durable queue is full: ' + this.bytes + ' bytes stored, limit ' + this.settings.maxBytes);
    }
    if (rolls) this.roll();
    this.write(line);
    this.active().maxSeq = seq;
    this.next = seq + 1;
    this.afterWrite();
  }

  /** Never throws for a failed write: the samples then come back after a restart, which is a duplicate, not a loss. */
  ack(seq: number): void {
    this.usable();
    if (!Number.isSafeInteger(seq)) throw new RangeError('sequence number ' + seq + ' is not an integer');
    if (seq <= this.acked) return;
    const next = Math.max(this.next, seq + 1);
    try {
      this.write(encodeCheckpoint(seq, next));
      this.acked = seq;
      this.next = next;
      this.afterWrite();
    } catch {
      this.ackFailures++;
    }
  }

  /** One small write per batch, handed to the OS before the request goes (in-flight-file.ts). */
  sending(batch: Readonly<InFlight>): void {
    this.usable();
    this.batchOut.write(batch);
  }

  inFlight(): InFlight | null {
    return this.batchOut.read();
  }

  close(): void {
    if (this.closed) return;
    if (this.timer !== null) clearTimeout(this.timer);
    try {
      if (this.settings.fsync !== 'never' && this.failure === null) this.sync();
    } catch {
      // Recorded in `failure` by sync(); closing must still release the file and the directory.
    } finally {
      closeSync(this.fd);
      this.closed = true;
      this.release();
    }
  }

  stats(): DurableQueueStats {
    return {
      segments: this.segments.length,
      bytes: this.bytes,
      acked: this.acked,
      nextSeq: this.next,
      skippedRecords: this.skipped,
      truncatedBytes: this.truncated,
      syncs: this.syncs,
      unsynced: this.written - this.synced,
      ackFailures: this.ackFailures,
      failure: this.failure === null ? null : this.failure.message,
    };
  }

  private recover(name: string, newest: boolean): void {
    const path = join(this.dir, name);
    const bytes = readFileSync(path);
    let maxSeq = 0;
    const scan = scanSegment(bytes, (record) => {
      if (record.kind === 'sample') {
        maxSeq = Math.max(maxSeq, record.seq);
        this.next = Math.max(this.next, record.seq + 1);
      } else {
        this.acked = Math.max(this.acked, record.acked);
        this.next = Math.max(this.next, record.next);
      }
    });
    this.skipped += scan.badLines + scan.tailLines;
    let size = bytes.length;
    // A torn last record (the process or the power died mid-write): cut it off so the file ends clean.
    if (newest && scan.tailLines > 0) {
      truncateSync(path, scan.goodEnd);
      this.truncated += size - scan.goodEnd;
      size = scan.goodEnd;
    }
    this.segments.push({ id: Number(SEGMENT_NAME.exec(name)![1]), path, bytes: size, maxSeq });
    this.bytes += size;
  }

  private active(): Segment {
    return this.segments[this.segments.length - 1];
  }

  private startSegment(id: number): void {
    const path = join(this.dir, 'seg-' + String(id).padStart(16, '0') + '.log');
    this.fd = openSync(path, 'ax');
    this.segments.push({ id, path, bytes: 0, maxSeq: 0 });
    this.dirDirty = true;
    // Each segment starts with the ack state, so deleting older segments never forgets it.
    this.write(encodeCheckpoint(this.acked, this.next));
  }

  private roll(): void {
    if (this.written > this.synced && this.settings.fsync !== 'never') this.sync();
    closeSync(this.fd);
    this.startSegment(this.active().id + 1);
  }

  private write(line: Buffer): void {
    const segment = this.active();
    try {
      let done = 0;
      while (done < line.length) {
        const n = writeSync(this.fd, line, done, line.length - done);
        if (n <= 0) throw new Error('write made no progress');
        done += n;
      }
    } catch (e) {
      // Take back a partial record (disk full), so the next one starts on a clean line.
      try {
        ftruncateSync(this.fd, segment.bytes);
      } catch {
        this.failure = asError(e);
      }
      throw e;
    }
    segment.bytes += line.length;
    this.bytes += line.length;
    this.written++;
  }

  private afterWrite(): void {
    switch (this.settings.fsync) {
      case 'always':
        this.sync();
        break;
      case 'interval':
        if (this.written - this.synced >= this.settings.fsyncRecords) this.sync();
        else this.syncSoon();
        break;
      case 'never':
        this.durableAcked = this.acked;
        this.compact();
        break;
    }
  }

  /**
   * Arms the interval's timer. Its instants are multiples of fsyncIntervalMs on the process's clock, the
   * same for every queue of that interval: a gateway's thousand queues then sync together, off the event
   * loop, and the file system makes their journal commits once for all, where a thousand syncs one after
   * the other would block the process for seconds (docs/durable-queue.md).
   */
  private syncSoon(): void {
    if (this.timer !== null || this.written === this.synced) return;
    const every = this.settings.fsyncIntervalMs;
    this.timer = setTimeout(() => this.syncInBackground(), every - (performance.now() % every));
    this.timer.unref();
  }

  /** An fdatasync in the thread pool; what was written up to now is synced once it completes. */
  private syncInBackground(): void {
    this.timer = null;
    if (this.closed || this.failure !== null) return;
    if (this.syncing) return this.syncSoon();
    this.syncing = true;
    const segment = this.active();
    const written = this.written;
    const acked = this.acked;
    fdatasync(this.fd, (error) => {
      this.syncing = false;
      // A roll or a close synced that file's records itself, before closing it.
      if (this.closed || this.active() !== segment) return;
      try {
        if (error) throw error;
        this.syncs++;
        if (this.dirDirty) syncDirectory(this.dir);
        this.dirDirty = false;
      } catch (e) {
        this.failure = asError(e);
        return;
      }
      this.synced = Math.max(this.synced, written);
      this.durableAcked = Math.max(this.durableAcked, acked);
      this.compact();
      this.syncSoon();
    });
  }

  private sync(): void {
    try {
      if (this.written > this.synced) {
        fdatasyncSync(this.fd);
        this.syncs++;
      }
      if (this.dirDirty) syncDirectory(this.dir);
    } catch (e) {
      // After a failed fsync the kernel may have dropped the unwritten pages: nothing is trustworthy now.
      this.failure = asError(e);
      throw e;
    }
    this.synced = this.written;
    this.dirDirty = false;
    this.durableAcked = this.acked;
    this.compact();
  }

  /** Deletes the oldest segments while every sample in them is acknowledged on disk; never the active one. */
  private compact(): void {
    while (this.segments.length > 1 && this.segments[0].maxSeq <= this.durableAcked) {
      const segment = this.segments[0];
      unlinkSync(segment.path);
      this.segments.shift();
      this.bytes -= segment.bytes;
    }
  }

  private usable(): void {
    if (this.closed) throw new Error('durable queue is closed');
    if (this.failure !== null) throw new Error('durable queue failed: ' + this.failure.message);
  }
}

// A new segment's name lives in the directory: it survives a power cut only once the directory is synced.
function syncDirectory(dir: string): void {
  if (process.platform === 'win32') return; // a directory cannot be opened there; NTFS journals names itself
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function settingsOf(options: DurableQueueOptions): Settings {
  const settings: Settings = {
    fsync: options.fsync ?? 'interval',
    fsyncIntervalMs: options.fsyncIntervalMs ?? 1000,
    fsyncRecords: options.fsyncRecords ?? 1000,
    segmentBytes: options.segmentBytes ?? MIB,
    maxBytes: options.maxBytes ?? 16 * MIB,
  };
  const problems: string[] = [];
  if (!['always', 'interval', 'never'].includes(settings.fsync)) problems.push('fsync: expected "always", "interval" or "never"');
  if (!(Number.isFinite(settings.fsyncIntervalMs) && settings.fsyncIntervalMs > 0)) problems.push('fsyncIntervalMs: expected a number > 0');
  if (!(Number.isSafeInteger(settings.fsyncRecords) && settings.fsyncRecords > 0)) problems.push('fsyncRecords: expected an integer > 0');
  if (!(Number.isSafeInteger(settings.segmentBytes) && settings.segmentBytes > 0)) problems.push('segmentBytes: expected an integer > 0');
  if (!(Number.isSafeInteger(settings.maxBytes) && settings.maxBytes >= settings.segmentBytes)) {
    problems.push('maxBytes: expected an integer ≥ segmentBytes');
  }
  if (problems.length > 0) throw new RangeError('durable queue options: ' + problems.join('; '));
  return settings;
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}
