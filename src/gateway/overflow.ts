// A device's overflow: where its readings go while its queue is full (its token refused, the service down
// longer than the queue rides out), so that they are acknowledged at once and the other devices behind the
// same broker connection go on. It is a durable queue of its own (platforms/node/durable-queue.ts: the same
// records and checksums, the same fsync policy and grouping, a segment file deleted once all of it was fed
// back) in the device's queue folder, under `overflow/`, and bounded in bytes. It is read back oldest first
// through a cursor over its segment files, so what it holds stays on disk, not in memory.
//
// Which readings were fed back is kept in a mark rewritten in place (`fed`, one small write per reading),
// not as an ack record per reading in the log: those would take as much room as the readings. The log is
// acked about once a segment's worth of readings (and when all is fed), which lets fed segments go.
import { closeSync, openSync, readdirSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';

import type { SampleValue } from '../core/host';
import { openDurableQueue, SEGMENT_NAME } from '../../platforms/node/durable-queue';
import type { DurableQueue, FsyncPolicy } from '../../platforms/node/durable-queue';
import { encodeCheckpoint, scanSegment } from '../../platforms/node/log-record';

export interface OverflowOptions {
  fsync: FsyncPolicy;
  fsyncIntervalMs: number;
  /** The bound on disk: a reading that would take the files past it is not taken. */
  maxBytes: number;
}

export interface Spilled {
  seq: number;
  resource: number;
  value: SampleValue;
}

const MIB = 1024 * 1024;
/** Bytes read from a segment at a time: a few hundred readings in memory while the overflow is fed back. */
const CHUNK = 16 * 1024;
const NEWLINE = 0x0a;
/** Fewer bytes than a reading's record takes: the log is acked at least once per segment's worth of readings. */
const ACK_BYTES = 64;
/** More than the longest mark: a checksum and two sequence numbers. */
const MARK_BYTES = 64;

export class Overflow {
  private readonly queue: DurableQueue;
  private readonly reader: SegmentReader;
  private readonly mark: FedMark;
  /** Sequence number of the next reading taken, of the last one fed back, and of the last the log was told of. */
  private next: number;
  private fed: number;
  private acked: number;
  private readonly ackEvery: number;
  /** Why the last reading was not taken, or null. */
  refusal: string | null = null;

  /** Opens (creating if needed) the overflow kept in `dir`; what an earlier run left in it comes first. */
  constructor(dir: string, options: OverflowOptions) {
    // Segments of a quarter of the bound at most: fed ones are deleted while the newest still takes readings.
    const segmentBytes = Math.max(1, Math.min(MIB, Math.floor(options.maxBytes / 4)));
    this.ackEvery = Math.max(1, Math.floor(segmentBytes / ACK_BYTES));
    this.queue = openDurableQueue(dir, { fsync: options.fsync, fsyncIntervalMs: options.fsyncIntervalMs, maxBytes: options.maxBytes, segmentBytes });
    const s = this.queue.stats();
    this.mark = new FedMark(join(dir, 'fed'));
    this.next = s.nextSeq;
    // A mark beyond what was ever taken is not this log's (a folder copied over): the log's own ack stands.
    const marked = this.mark.read();
    this.fed = marked < this.next ? Math.max(s.acked, marked) : s.acked;
    this.acked = s.acked;
    this.reader = new SegmentReader(dir, this.fed);
  }

  /** Readings held, not fed back yet. */
  get size(): number {
    return this.next - 1 - this.fed;
  }

  /** Takes a reading, handed to the OS before it returns; false when the bound is reached or the write failed (`refusal` says why). */
  push(resource: number, value: SampleValue): boolean {
    try {
      this.queue.append(this.next, resource, value, NaN);
    } catch (e) {
      this.refusal = (e as Error).message;
      return false;
    }
    this.next++;
    return true;
  }

  /** The oldest reading held, or null. */
  peek(): Spilled | null {
    if (this.size === 0) return null;
    const oldest = this.reader.peek();
    // Records lost to damage on disk (a power cut): the rest counts as fed.
    if (oldest === null) this.fedUpTo(this.next - 1);
    return oldest;
  }

  /** The oldest reading is in the device's queue now (written there first: a kill between stores it twice, never loses it). */
  shift(): void {
    const oldest = this.reader.peek();
    if (oldest === null) return;
    this.reader.advance();
    this.fedUpTo(oldest.seq);
  }

  close(): void {
    this.mark.close();
    this.queue.close();
  }

  private fedUpTo(seq: number): void {
    this.mark.write(seq, this.next);
    this.fed = seq;
    if (seq - this.acked >= this.ackEvery || this.size === 0) {
      this.queue.ack(seq);
      this.acked = seq;
    }
  }
}

/**
 * The last reading fed back, one record (log-record.ts's checkpoint line) rewritten at the start of a file:
 * one positional write of a few dozen bytes, handed to the OS, so it survives kill -9. A torn or missing
 * one reads as 0: the log's own ack then decides, and readings fed since come again (twice, never lost).
 */
class FedMark {
  private readonly fd: number;

  constructor(path: string) {
    closeSync(openSync(path, 'a'));
    this.fd = openSync(path, 'r+');
  }

  read(): number {
    let fed = 0;
    const bytes = Buffer.alloc(MARK_BYTES);
    const got = readSync(this.fd, bytes, 0, MARK_BYTES, 0);
    // Only the first line counts: a shorter record leaves the end of a longer one behind it.
    const end = bytes.subarray(0, got).indexOf(NEWLINE) + 1;
    scanSegment(bytes.subarray(0, end), (r) => {
      if (r.kind === 'checkpoint') fed = r.acked;
    });
    return fed;
  }

  /** Never throws: a mark that could not be written makes readings come again after a restart, not go. */
  write(fed: number, next: number): void {
    const line = encodeCheckpoint(fed, next);
    try {
      writeSync(this.fd, line, 0, line.length, 0);
    } catch {
      // The log's ack, once a segment's worth, still bounds what comes again.
    }
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** Reads a durable queue's samples after a given sequence number, oldest first, a chunk at a time. */
class SegmentReader {
  /** The segment file being read, and how far. */
  private name: string | null = null;
  private offset = 0;
  private chunk: Spilled[] = [];
  private at = 0;

  constructor(
    private readonly dir: string,
    /** The last sequence number read. */
    private last: number,
  ) {}

  peek(): Spilled | null {
    if (this.at === this.chunk.length) this.fill();
    return this.at < this.chunk.length ? this.chunk[this.at] : null;
  }

  advance(): void {
    this.at++;
  }

  private fill(): void {
    this.chunk = [];
    this.at = 0;
    let size = CHUNK;
    for (;;) {
      const names = readdirSync(this.dir).filter((n) => SEGMENT_NAME.test(n)).sort();
      let i = this.name === null ? -1 : names.indexOf(this.name);
      if (i < 0) {
        // The first read, or the file read last was deleted (all of it fed): the next one after it.
        i = names.findIndex((n) => this.name === null || n > this.name);
        if (i < 0) return;
        this.name = names[i];
        this.offset = 0;
      }
      const bytes = readAt(join(this.dir, this.name as string), this.offset, size);
      const end = bytes.lastIndexOf(NEWLINE) + 1;
      if (end === 0) {
        if (bytes.length === size) {
          size *= 2; // a record longer than the chunk
          continue;
        }
        // The end of this file: on to the next one, if there is one yet.
        if (i === names.length - 1) return;
        this.name = names[i + 1];
        this.offset = 0;
        continue;
      }
      scanSegment(bytes.subarray(0, end), (r) => {
        if (r.kind === 'sample' && r.seq > this.last) {
          this.last = r.seq;
          this.chunk.push({ seq: r.seq, resource: r.resource, value: r.value });
        }
      });
      this.offset += end;
      if (this.chunk.length > 0) return;
    }
  }
}

function readAt(path: string, offset: number, size: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(size);
    return buf.subarray(0, readSync(fd, buf, 0, size, offset));
  } finally {
    closeSync(fd);
  }
}
