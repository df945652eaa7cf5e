// One segment file of the durable queue's log, as the queue knows it without reading it all.
import { join } from 'node:path';

/** The name of a segment file; its number orders the segments. */
export const SEGMENT_NAME = /^seg-(\d{16})\.log$/;

export interface Segment {
  id: number;
  path: string;
  bytes: number;
  /**
   * The next sequence number when it was begun, from its leading checkpoint: each sample in it has at least
   * this one. NaN when that checkpoint is damaged.
   */
  firstSeq: number;
  /**
   * No sample in it has a higher sequence number: exact for the segments this run wrote and the newest one
   * found at opening, else the next segment's `firstSeq` less one. 0 when it holds none.
   */
  maxSeq: number;
  /** Written by this run: its samples' times are on this run's clock. */
  ours: boolean;
  /** Damaged records before this byte were counted (they are counted once, when first met). */
  checkedTo: number;
}

export function segmentPath(dir: string, id: number): string {
  return join(dir, 'seg-' + String(id).padStart(16, '0') + '.log');
}
