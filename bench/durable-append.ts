// What the durable queue's fsync policies cost and what they leave exposed (docs/durable-queue.md): the
// time of one append with a sync per record (`always`), grouped (`interval`: every fsyncIntervalMs or
// fsyncRecords records, whichever first) and never, on this machine's disk; and the window a power cut
// could take under grouping, measured: the most records and the longest time a record waited unsynced,
// at full speed (where the count bound acts) and at a device's pace (where the interval acts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { openDurableQueue } from '../platforms/node/storage/durable-queue';
import type { DurableQueueOptions } from '../platforms/node/storage/durable-queue';
import { sleep } from './measure';

export interface AppendCost {
  /** µs per append, sync per record. */
  alwaysUs: number;
  /** µs per append, syncs grouped (the default policy). */
  groupedUs: number;
  neverUs: number;
  /** Under grouping at full speed: the most records unsynced at once, and the longest a record waited (ms). */
  fastWindowRecords: number;
  fastWindowMs: number;
  /** The same at `slowRate` appends a second. */
  slowRate: number;
  slowWindowRecords: number;
  slowWindowMs: number;
}

/** Watches a queue's syncs: how many records waited, and how long the oldest of them did. */
class Window {
  records = 0;
  ms = 0;
  private since: number | null = null;
  private syncs = 0;

  constructor(private readonly queue: ReturnType<typeof openDurableQueue>) {}

  /** Call after each write, and often in between (a timer syncs too). */
  look(): void {
    const { syncs, unsynced } = this.queue.stats();
    const now = performance.now();
    if (syncs !== this.syncs) {
      if (this.since !== null) this.ms = Math.max(this.ms, now - this.since);
      this.syncs = syncs;
      this.since = null;
    }
    this.records = Math.max(this.records, unsynced);
    if (unsynced > 0 && this.since === null) this.since = now;
  }
}

export async function measureAppends(short: boolean): Promise<AppendCost> {
  const scratch = mkdtempSync(join(tmpdir(), 'feed-agent-append-'));
  let dirs = 0;
  const open = (options: DurableQueueOptions) => openDurableQueue(join(scratch, String(dirs++)), options);
  // µs per append of `n` samples of a counter (a gateway's typical value).
  const timed = (options: DurableQueueOptions, n: number): number => {
    const queue = open(options);
    const t0 = performance.now();
    for (let seq = 1; seq <= n; seq++) queue.append(seq, 105, 1_000_000 + seq, seq);
    const us = ((performance.now() - t0) * 1000) / n;
    queue.close();
    return us;
  };
  try {
    const n = short ? 20_000 : 100_000;
    const alwaysUs = timed({ fsync: 'always' }, short ? 200 : 1000);
    const groupedUs = timed({}, n);
    const neverUs = timed({ fsync: 'never' }, n);

    const fast = open({});
    const fastWindow = new Window(fast);
    for (let seq = 1; seq <= n; seq++) {
      fast.append(seq, 105, seq, seq);
      fastWindow.look();
    }
    fast.close();

    // A device's pace: an append every 5 ms or so for a few intervals; the interval's timer syncs in between.
    const slow = open({});
    const slowWindow = new Window(slow);
    const ticker = setInterval(() => slowWindow.look(), 1);
    const slowAppends = short ? 600 : 1200;
    const started = performance.now();
    for (let seq = 1; seq <= slowAppends; seq++) {
      slow.append(seq, 105, seq, seq);
      slowWindow.look();
      await sleep(5);
    }
    const slowRate = Math.round((slowAppends * 1000) / (performance.now() - started));
    await sleep(1100);
    clearInterval(ticker);
    slow.close();
    return {
      alwaysUs,
      groupedUs,
      neverUs,
      fastWindowRecords: fastWindow.records,
      fastWindowMs: fastWindow.ms,
      slowRate,
      slowWindowRecords: slowWindow.records,
      slowWindowMs: slowWindow.ms,
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
