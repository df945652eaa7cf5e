// Reads the durable queue's samples oldest first, from a sequence number on, a chunk of a segment file at a
// time: what waits on disk stays there, and a read that goes on from where the last one stopped rereads
// nothing. Damaged records are counted when first met; a segment of an earlier run gives its samples'
// times converted to this run's clock (sample-time.ts).
import { closeSync, openSync, readSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

import type { StoredVisit } from '../../../src/core/host/host';
import { decodeLine, NEWLINE } from './log-record';
import type { PlainSample } from './plain-sample';
import { earlierRunTime, wallAnchor } from './sample-time';
import type { Segment } from './segment';

/** Bytes read at a time: about five thousand records, the next fifty batches of a delivery. */
const CHUNK = 256 * 1024;

// One buffer for every queue of the process, so that a gateway's thousands of queues hold none: a read is
// synchronous, so it is free again when it returns (a visit that reads a queue itself gets one of its own).
// It keeps what it holds for the cursor that read last, which then goes on without reading the file again.
let spare: Buffer | null = null;
/** What `spare` holds: `length` bytes of `segment` from byte `from`, read by `by`. */
const held = { by: null as SegmentCursor | null, segment: null as Segment | null, from: 0, length: 0 };

export class SegmentCursor {
  /** The segment being read, its file while it is read, and the byte offset of the next line to read in it. */
  private segment: Segment | null = null;
  private fd = -1;
  private offset = 0;
  /** The sequence number of the last sample passed: none at or below it is visited again. */
  private after = -1;
  /** The anchor in force at `offset`, from the last checkpoint read in this segment (an earlier run's). */
  private anchor = NaN;
  /**
   * The latest time given to an earlier run's sample: a later one is given no earlier time, so that a wall
   * clock set back while that run wrote does not put its samples out of order.
   */
  private lastAt = -Infinity;
  /** Damaged records met. */
  damaged = 0;
  /** Where a numeric or boolean sample is decoded: its fields go to the visit at once. */
  private readonly scratch: PlainSample = { kind: 'sample', seq: 0, resource: 0, value: 0, time: NaN };

  /**
   * Visits at most `max` samples with a sequence number ≥ `from`, oldest first, until `visit` returns false.
   * Returns the sequence number of the first sample not taken, or null when no sample is left.
   */
  read(segments: readonly Segment[], from: number, max: number, visit: StoredVisit): number | null {
    this.position(segments, from);
    const anchorNow = wallAnchor();
    const now = performance.now();
    let buf = spare ?? Buffer.allocUnsafe(CHUNK);
    spare = null;
    // The file bytes [bufFrom, bufFrom + got) of this.segment are in buf.
    let bufFrom = -1;
    let got = 0;
    if (held.by === this && held.segment === this.segment) {
      bufFrom = held.from;
      got = held.length;
    }
    held.by = null;
    let visited = 0;
    try {
      while (this.segment !== null) {
        const segment = this.segment;
        let pos = this.offset - bufFrom;
        let nl = bufFrom < 0 || pos < 0 || pos >= got ? -1 : buf.indexOf(NEWLINE, pos);
        if (nl === -1 || nl >= got) {
          // No whole line left in what buf holds: the file from this.offset on.
          got = this.readAt(buf);
          bufFrom = this.offset;
          pos = 0;
          nl = buf.indexOf(NEWLINE);
          if (got === 0) {
            if (!this.advance(segments)) return null;
            bufFrom = -1;
            continue;
          }
          if (nl === -1 || nl >= got) {
            if (got === buf.length) {
              buf = Buffer.allocUnsafe(buf.length * 2); // a record longer than the chunk
              bufFrom = -1;
            } else {
              // A last line without its newline: the torn end of a segment no longer written.
              if (this.offset >= segment.checkedTo) this.damaged++;
              this.offset += got;
              segment.checkedTo = Math.max(segment.checkedTo, this.offset);
            }
            continue;
          }
        }
        for (; nl !== -1 && nl < got; pos = nl + 1, nl = buf.indexOf(NEWLINE, pos)) {
          const lineAt = bufFrom + pos;
          const record = decodeLine(buf, pos, nl, this.scratch);
          if (record === null) {
            if (lineAt >= segment.checkedTo) this.damaged++;
          } else if (record.kind === 'checkpoint') {
            this.anchor = record.anchor;
          } else if (record.seq >= from && record.seq > this.after) {
            const at = segment.ours ? record.time : this.earlier(record.time, anchorNow, now);
            if (visited === max || visit(record.seq, record.resource, record.value, at) === false) {
              this.offset = lineAt;
              Object.assign(held, { by: this, segment, from: bufFrom, length: got });
              return record.seq;
            }
            visited++;
            this.after = record.seq;
          }
          this.offset = bufFrom + nl + 1;
          segment.checkedTo = Math.max(segment.checkedTo, this.offset);
        }
      }
      return null;
    } finally {
      spare = buf;
    }
  }

  /** The queue closes: the file being read too, and the buffer forgets this cursor. */
  close(): void {
    this.closeFile();
    if (held.by === this) held.by = held.segment = null;
  }

  /** Where a read from `from` begins: on from here, or at the segment holding it (back, or forward past others). */
  private position(segments: readonly Segment[], from: number): void {
    const at = this.segment === null ? -1 : segments.indexOf(this.segment);
    const start = startOf(segments, from);
    if (at >= 0 && from > this.after && start <= at) return;
    if (at < 0 || from <= this.after) {
      this.after = -1;
      this.lastAt = -Infinity;
    }
    this.enter(segments[start] ?? null);
  }

  /**
   * On to the next segment at the end of one; false at the end of the newest, where the cursor stays (its
   * file closed: nothing to read holds none open).
   */
  private advance(segments: readonly Segment[]): boolean {
    const next = segments[segments.indexOf(this.segment as Segment) + 1];
    if (next === undefined) {
      this.closeFile();
      return false;
    }
    this.enter(next);
    return true;
  }

  private enter(segment: Segment | null): void {
    this.closeFile();
    this.segment = segment;
    this.offset = 0;
    this.anchor = NaN;
    // Each sample in it has at least its first sequence number: skipping below that skips nothing it holds.
    if (segment !== null && segment.firstSeq - 1 > this.after) this.after = segment.firstSeq - 1;
  }

  private closeFile(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }

  /** Reads `buf.length` bytes of the segment at `offset`; 0 at its end, or when it was deleted. */
  private readAt(buf: Buffer): number {
    if (this.fd < 0) {
      try {
        this.fd = openSync((this.segment as Segment).path, 'r');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 0;
        throw e;
      }
    }
    return readSync(this.fd, buf, 0, buf.length, this.offset);
  }

  private earlier(t: number, anchorNow: number, now: number): number {
    let at = earlierRunTime(t, this.anchor, anchorNow, now);
    if (at === at) {
      if (at < this.lastAt) at = this.lastAt;
      this.lastAt = at;
    }
    return at;
  }
}

/**
 * The segment where samples from `from` on begin: the last whose first sequence number is at most `from`
 * (every sample before it is below that), else the first.
 */
function startOf(segments: readonly Segment[], from: number): number {
  for (let i = segments.length - 1; i > 0; i--) if (segments[i].firstSeq <= from) return i;
  return 0;
}
