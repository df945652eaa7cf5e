// What opening the durable queue learns from the segment files an earlier run left, without reading the
// backlog: the leading checkpoint of each segment (where its samples begin, the acknowledgements so far),
// and all of the newest one only, the one a crash can have torn, whose end is cut back to its last good
// record. Older segments are read later, a chunk at a time, as the backlog is delivered (segment-cursor.ts).
import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';

import { decodeLine, NEWLINE, scanSegment } from './log-record';
import { SEGMENT_NAME } from './segment';
import type { Segment } from './segment';

export interface Recovered {
  /** Oldest first. */
  segments: Segment[];
  /** Every sample up to this one is acknowledged. */
  acked: number;
  /** Above every sequence number used. */
  next: number;
  /** Damaged records found (the newest segment's, a torn tail included). */
  skipped: number;
  /** Bytes of torn tail cut off the newest segment. */
  truncated: number;
}

/** More than a checkpoint line takes. */
const HEAD_BYTES = 256;

export function recoverSegments(dir: string): Recovered {
  const names = readdirSync(dir)
    .filter((name) => SEGMENT_NAME.test(name))
    .sort();
  const found: Recovered = { segments: [], acked: 0, next: 1, skipped: 0, truncated: 0 };
  names.forEach((name, i) => {
    const path = join(dir, name);
    const id = Number(SEGMENT_NAME.exec(name)![1]);
    found.segments.push(i === names.length - 1 ? scanNewest(path, id, found) : readHead(path, id, found));
  });
  // A segment's samples lie below the next one's first sequence number; where that is unknown (its
  // checkpoint damaged), the segment is read through instead.
  for (let i = found.segments.length - 2; i >= 0; i--) {
    const later = found.segments[i + 1].firstSeq;
    if (later === later) found.segments[i].maxSeq = later - 1;
    else scanWhole(found.segments[i], found);
  }
  found.next = Math.max(found.next, found.acked + 1);
  return found;
}

/** A segment of which only the leading checkpoint is read. */
function readHead(path: string, id: number, found: Recovered): Segment {
  const head = Buffer.alloc(HEAD_BYTES);
  const fd = openSync(path, 'r');
  let got: number;
  let bytes: number;
  try {
    got = readSync(fd, head, 0, HEAD_BYTES, 0);
    bytes = statSync(path).size;
  } finally {
    closeSync(fd);
  }
  const segment: Segment = { id, path, bytes, firstSeq: NaN, maxSeq: 0, ours: false, checkedTo: 0 };
  const end = head.subarray(0, got).indexOf(NEWLINE);
  const first = end < 0 ? null : decodeLine(head, 0, end);
  if (first?.kind === 'checkpoint') {
    segment.firstSeq = first.next;
    note(found, first.acked, first.next);
  }
  return segment;
}

/** The newest segment, read through: its acknowledgements, its samples, and a torn tail cut off. */
function scanNewest(path: string, id: number, found: Recovered): Segment {
  const segment: Segment = { id, path, bytes: 0, firstSeq: NaN, maxSeq: 0, ours: false, checkedTo: 0 };
  const goodEnd = scanWhole(segment, found);
  // A torn last record (the process or the power died mid-write): cut off, so the file ends clean.
  if (goodEnd < segment.bytes) {
    truncateSync(path, goodEnd);
    found.truncated += segment.bytes - goodEnd;
    segment.bytes = segment.checkedTo = goodEnd;
  }
  return segment;
}

/**
 * Reads a segment through: its exact highest sequence number, its checkpoints, its damage counted.
 * Returns the byte offset past its last good record, where damage at its end begins.
 */
function scanWhole(segment: Segment, found: Recovered): number {
  const bytes = readFileSync(segment.path);
  const end = bytes.indexOf(NEWLINE);
  const first = end < 0 ? null : decodeLine(bytes, 0, end);
  if (first?.kind === 'checkpoint') segment.firstSeq = first.next;
  let maxSeq = 0;
  const scan = scanSegment(bytes, (record) => {
    if (record.kind === 'sample') {
      maxSeq = Math.max(maxSeq, record.seq);
      note(found, 0, record.seq + 1);
    } else note(found, record.acked, record.next);
  });
  segment.maxSeq = maxSeq;
  found.skipped += scan.badLines + scan.tailLines;
  segment.bytes = bytes.length;
  segment.checkedTo = bytes.length;
  return scan.tailLines > 0 ? scan.goodEnd : bytes.length;
}

function note(found: Recovered, acked: number, next: number): void {
  found.acked = Math.max(found.acked, acked);
  found.next = Math.max(found.next, next);
}
