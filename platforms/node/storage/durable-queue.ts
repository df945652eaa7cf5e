// The core's QueueStorage on disk, and the backlog behind its queue in memory: an append-only log of
// samples and ack checkpoints, cut into segment files that are deleted once everything in them is
// acknowledged, bounded in bytes. Opening reads no more than the newest segment and the first line of each
// other (segment-recovery.ts); the backlog is read as it is delivered, a chunk at a time (segment-cursor.ts).
// docs/durable-queue.md tells the format, the bound, the fsync policies and what a crash, a power cut or a
// full backlog can lose.
import { closeSync, fdatasync, fdatasyncSync, fsyncSync, ftruncateSync, openSync, readFileSync, realpathSync, unlinkSync, writeSync } from 'node:fs';

import type { InFlight, QueueStorage, SampleValue, StoredVisit } from '../../../src/core/host/host';
import { InFlightFile } from './in-flight-file';
import { encodeCheckpoint, encodeSample, scanSegment } from './log-record';
import { makeDirs } from './make-dirs';
import { STEP_MS, storedTime, wallAnchor } from './sample-time';
import { segmentPath } from './segment';
import type { Segment } from './segment';
import { SegmentCursor } from './segment-cursor';
import { recoverSegments } from './segment-recovery';
import { syncAtNextInstant } from './sync-rounds';
import type { BackgroundSync } from './sync-rounds';

export { SEGMENT_NAME } from './segment';

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
  /**
   * The bound: an append that would take the log past this returns false and writes nothing (the core's
   * overflow policy applies there). Default 256 MiB: about 4.6 million numeric samples, 10 days of the
   * simulator's demo device or 5 days of a gateway device at 10 readings a second (docs/durable-queue.md).
   */
  maxBytes?: number;
}

export interface DurableQueueStats {
  segments: number;
  /** Bytes of all segment files. */
  bytes: number;
  /** Every sample up to this sequence number is acknowledged. */
  acked: number;
  nextSeq: number;
  /**
   * Damaged records met, each dropped: the newest segment's when the queue was opened, torn tail included;
   * those of older segments when the backlog is read through them.
   */
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
  /** True when stored; false, writing nothing, at the bound (`maxBytes`). */
  append(seq: number, resource: number, value: SampleValue, at: number): boolean;
  read(from: number, max: number, visit: StoredVisit): number;
  discard(after: number): number;
  usedBytes(): number;
  readonly maxBytes: number;
  /** Syncs (unless the policy is `never`) and closes the files; the directory may then be opened again. */
  close(): void;
  stats(): DurableQueueStats;
  /** Keeps the batch out in a request, for a read-back after a restart (in-flight-file.ts). */
  sending(batch: Readonly<InFlight>): void;
  inFlight(): InFlight | null;
}

type Settings = Required<DurableQueueOptions>;

const MIB = 1024 * 1024;

// Two queues appending to one directory would interleave their records: refuse the second one.
const openDirs = new Set<string>();

/**
 * Opens (creating if needed) the queue kept in `dir`: reads the newest segment and the first line of each
 * other, drops a torn tail, and starts a new segment for this run's records. Throws on bad options, on a
 * directory already open in this process, or if the files cannot be read or created; damaged records never
 * make it throw.
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

class SegmentLog implements DurableQueue, BackgroundSync {
  private readonly segments: Segment[];
  private fd = -1;
  private bytes = 0;
  private acked: number;
  /** The highest ack known to be on disk: segments are deleted only up to it. */
  private durableAcked: number;
  private next: number;
  /** The wall clock at this process's monotonic zero, as last written to the log (sample-time.ts). */
  private anchor = wallAnchor();
  /** Records written since the queue opened, and how many of the first of them are synced. */
  private written = 0;
  private synced = 0;
  /** An fdatasync of the interval policy is running off the event loop. */
  private syncing = false;
  private dirDirty = false;
  /** Waiting in the next round of background syncs (sync-rounds.ts). */
  private inRound = false;
  private failure: Error | null = null;
  private closed = false;
  /** Damaged records found at opening; those met later are the cursor's. */
  private readonly skipped: number;
  private readonly truncated: number;
  private syncs = 0;
  private ackFailures = 0;
  /** Where the backlog is read from. */
  private readonly cursor = new SegmentCursor();
  /** The batch out in a request, in a file of its own beside the segments. */
  private readonly batchOut: InFlightFile;

  constructor(
    private readonly dir: string,
    private readonly settings: Settings,
    private readonly release: () => void,
  ) {
    this.batchOut = new InFlightFile(dir);
    const found = recoverSegments(dir);
    this.segments = found.segments;
    this.acked = this.durableAcked = found.acked;
    this.next = found.next;
    this.skipped = found.skipped;
    this.truncated = found.truncated;
    for (const segment of this.segments) this.bytes += segment.bytes;
    // Appends go to a segment of this run only, so a damaged older file is never written after.
    const last = this.segments[this.segments.length - 1];
    this.startSegment(last === undefined ? 1 : last.id + 1);
    this.afterWrite();
  }

  get maxBytes(): number {
    return this.settings.maxBytes;
  }

  load(visit: StoredVisit, max = Infinity): number {
    this.usable();
    this.cursor.read(this.segments, this.acked + 1, max, visit);
    return this.next;
  }

  read(from: number, max: number, visit: StoredVisit): number {
    this.usable();
    return this.cursor.read(this.segments, Math.max(from, this.acked + 1), max, visit) ?? this.next;
  }

  append(seq: number, resource: number, value: SampleValue, at: number): boolean {
    this.usable();
    if (!Number.isSafeInteger(seq) || seq < this.next) {
      throw new RangeError('sequence number ' + seq + ' is not above the last one stored (' + (this.next - 1) + ')');
    }
    const line = encodeSample(seq, resource, value, storedTime(at));
    const anchor = wallAnchor();
    // The wall clock was set: samples from here on are converted through its new reading.
    const stepped = Math.abs(anchor - this.anchor) > STEP_MS;
    // A segment holds at least one sample before it rolls.
    const rolls = this.active().maxSeq > 0 && this.active().bytes + line.length > this.settings.segmentBytes;
    // A new segment begins with a checkpoint, as a new anchor does: it counts against the bound too.
    const needed = line.length + (rolls || stepped ? encodeCheckpoint(this.acked, this.next, anchor).length : 0);
    // Acknowledged segments may be waiting for a sync before they can go.
    if (this.bytes + needed > this.settings.maxBytes && this.owesSync()) this.sync();
    if (this.bytes + needed > this.settings.maxBytes) return false;
    if (stepped) this.anchor = anchor;
    if (rolls) this.roll();
    else if (stepped) this.write(encodeCheckpoint(this.acked, this.next, anchor));
    this.write(line);
    this.active().maxSeq = seq;
    this.next = seq + 1;
    this.afterWrite();
    return true;
  }

  /** Never throws for a failed write: the samples then come back after a restart, which is a duplicate, not a loss. */
  ack(seq: number): void {
    this.usable();
    if (!Number.isSafeInteger(seq)) throw new RangeError('sequence number ' + seq + ' is not an integer');
    if (seq <= this.acked) return;
    const next = Math.max(this.next, seq + 1);
    try {
      this.write(encodeCheckpoint(seq, next, this.anchor));
      this.acked = seq;
      this.next = next;
      this.afterWrite();
    } catch {
      this.ackFailures++;
    }
  }

  /**
   * Gives up the oldest whole segment whose samples all lie beyond `after`, unacknowledged: the core's
   * drop-oldest at the bound. The segment being written goes too when it is the only one, after a roll.
   */
  discard(after: number): number {
    this.usable();
    // A segment of an earlier run is known by bounds only: one that held nothing unacknowledged frees its
    // bytes all the same, and the next one goes too.
    for (let segment = this.beyond(after); segment !== undefined; segment = this.beyond(after)) {
      if (segment === this.active()) this.roll();
      let gone = 0;
      scanSegment(readFileSync(segment.path), (record) => {
        if (record.kind === 'sample' && record.seq > this.acked) gone++;
      });
      this.remove(segment);
      if (gone > 0) return gone;
    }
    return 0;
  }

  usedBytes(): number {
    return this.bytes;
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
    try {
      if (this.settings.fsync !== 'never' && this.failure === null) this.sync();
    } catch {
      // Recorded in `failure` by sync(); closing must still release the file and the directory.
    } finally {
      closeSync(this.fd);
      this.cursor.close();
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
      skippedRecords: this.skipped + this.cursor.damaged,
      truncatedBytes: this.truncated,
      syncs: this.syncs,
      unsynced: this.written - this.synced,
      ackFailures: this.ackFailures,
      failure: this.failure === null ? null : this.failure.message,
    };
  }

  /** The oldest segment whose samples all lie beyond `after`, some of them maybe unacknowledged. */
  private beyond(after: number): Segment | undefined {
    return this.segments.find((s) => s.firstSeq > after && s.maxSeq > this.acked);
  }

  private active(): Segment {
    return this.segments[this.segments.length - 1];
  }

  private startSegment(id: number): void {
    const path = segmentPath(this.dir, id);
    this.fd = openSync(path, 'ax');
    this.segments.push({ id, path, bytes: 0, firstSeq: this.next, maxSeq: 0, ours: true, checkedTo: 0 });
    this.dirDirty = true;
    // Each segment starts with the ack state and the anchor, so deleting older segments never forgets them.
    this.write(encodeCheckpoint(this.acked, this.next, this.anchor));
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
   * Joins the next round of background syncs (sync-rounds.ts): at a multiple of fsyncIntervalMs on the
   * process's clock, the same instants for every queue of that interval, so that a gateway's thousands of
   * queues sync together, off the event loop, where one after the other they would block the process for
   * seconds (docs/durable-queue.md).
   */
  private syncSoon(): void {
    if (this.inRound || this.written === this.synced) return;
    this.inRound = true;
    syncAtNextInstant(this, this.settings.fsyncIntervalMs);
  }

  /** An fdatasync in the thread pool; what was written up to now is synced once it completes. Its round's turn. */
  syncInBackground(done: () => void): void {
    this.inRound = false;
    if (this.closed || this.failure !== null) return done();
    if (this.syncing) {
      this.syncSoon();
      return done();
    }
    this.syncing = true;
    const segment = this.active();
    const written = this.written;
    const acked = this.acked;
    fdatasync(this.fd, (error) => {
      this.syncing = false;
      done();
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
    while (this.segments.length > 1 && this.segments[0].maxSeq <= this.durableAcked) this.remove(this.segments[0]);
  }

  /** A sync would let acknowledged segments go. */
  private owesSync(): boolean {
    return this.settings.fsync !== 'never' && this.segments.length > 1 && this.segments[0].maxSeq <= this.acked && this.durableAcked < this.acked;
  }

  private remove(segment: Segment): void {
    unlinkSync(segment.path);
    this.segments.splice(this.segments.indexOf(segment), 1);
    this.bytes -= segment.bytes;
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
    maxBytes: options.maxBytes ?? 256 * MIB,
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
