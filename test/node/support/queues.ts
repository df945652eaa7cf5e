// What the durable queue's tests share: a scratch directory of fresh queue directories, a queue opened for
// one use, its segment files, and a range of sequence numbers.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

import { openDurableQueue } from '../../../platforms/node/storage/durable-queue';
import type { DurableQueue, DurableQueueOptions } from '../../../platforms/node/storage/durable-queue';

/** A scratch directory for the file's tests, removed after them; `freshDir()` names a new queue directory in it. */
export function scratchDirs(prefix: string): { scratch: string; freshDir: () => string } {
  const scratch = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  let dirs = 0;
  return { scratch, freshDir: () => join(scratch, 'q' + dirs++) };
}

/** Opens, runs `use`, and closes, so a failed expectation never leaves the directory open. */
export function withQueue<T>(dir: string, options: DurableQueueOptions, use: (queue: DurableQueue) => T): T {
  const queue = openDurableQueue(dir, options);
  try {
    return use(queue);
  } finally {
    queue.close();
  }
}

export function segmentFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.startsWith('seg-'))
    .sort()
    .map((name) => join(dir, name));
}

export const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);
