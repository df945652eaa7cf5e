// The durable queue: what comes back after a reopen, segments and their deletion, damaged files, the size
// bound, the fsync policies, and a writer killed with SIGKILL ten times.
import { spawn } from 'node:child_process';
import { cpSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';

import type { SampleValue } from '../../src/core/host/host';
import { createRandom } from '../../src/core/host/random';
import { openDurableQueue } from '../../platforms/node/storage/durable-queue';
import type { DurableQueue, FsyncPolicy } from '../../platforms/node/storage/durable-queue';
import { bundle } from './support/bundle';
import { range, scratchDirs, segmentFiles, withQueue } from './support/queues';
import { ACK_LAG, sampleFor } from './support/samples';

interface Sample {
  seq: number;
  resource: number;
  value: SampleValue;
}

const { scratch, freshDir } = scratchDirs('feed-agent-queue-');

function loadAll(queue: DurableQueue): Sample[] {
  const samples: Sample[] = [];
  queue.load((seq, resource, value) => void samples.push({ seq, resource, value }));
  return samples;
}

const expected = (seqs: number[]): Sample[] => seqs.map((seq) => ({ seq, ...sampleFor(seq) }));

function appendRange(queue: DurableQueue, from: number, to: number): void {
  for (const seq of range(from, to)) {
    const { resource, value } = sampleFor(seq);
    queue.append(seq, resource, value, 0);
  }
}

describe('openDurableQueue', () => {
  it('gives back every unacknowledged sample, oldest first, with its value, after a reopen', () => {
    const dir = freshDir();
    withQueue(dir, {}, (queue) => {
      expect(queue.load(() => expect.unreachable())).toBe(1);
      appendRange(queue, 1, 12);
      queue.ack(5);
    });
    withQueue(dir, {}, (queue) => {
      expect(loadAll(queue)).toEqual(expected(range(6, 12)));
      expect(queue.load(() => {})).toBe(13);
      expect(queue.stats()).toMatchObject({ acked: 5, nextSeq: 13, skippedRecords: 0, truncatedBytes: 0 });
    });
  });

  it('stores strings exactly, whatever they contain', () => {
    const dir = freshDir();
    const strings = ['', 'line\nbreak\r\n', '"quoted" \\ back', 'é✓😀', '\u0000\u001f', 'lone \ud800 surrogate', 'x'.repeat(5000)];
    withQueue(dir, {}, (queue) => strings.forEach((s, i) => queue.append(i + 1, 9, s, 0)));
    withQueue(dir, {}, (queue) => expect(loadAll(queue).map((s) => s.value)).toEqual(strings));
  });

  it('continues the sequence after an ack of samples it never stored', () => {
    const dir = freshDir();
    withQueue(dir, {}, (queue) => {
      appendRange(queue, 1, 3);
      queue.ack(10);
    });
    withQueue(dir, {}, (queue) => {
      expect(loadAll(queue)).toEqual([]);
      expect(queue.load(() => {})).toBe(11);
    });
  });

  it('refuses a sample it could not read back as itself, or out of order, and goes on', () => {
    withQueue(freshDir(), {}, (queue) => {
      queue.append(4, 1, 1, 0);
      expect(() => queue.append(4, 1, 2, 0)).toThrow(RangeError);
      expect(() => queue.append(3, 1, 2, 0)).toThrow(RangeError);
      expect(() => queue.append(5, 1, NaN, 0)).toThrow(RangeError);
      expect(() => queue.append(5, 1, -Infinity, 0)).toThrow(RangeError);
      expect(() => queue.append(5, 1.5, 1, 0)).toThrow(RangeError);
      expect(() => queue.append(5, 1, null as unknown as number, 0)).toThrow(RangeError);
      queue.append(5, 1, 5, 0);
      expect(loadAll(queue)).toEqual([
        { seq: 4, resource: 1, value: 1 },
        { seq: 5, resource: 1, value: 5 },
      ]);
    });
  });

  it('starts new segments as they fill and deletes those whose samples are all acknowledged', () => {
    const dir = freshDir();
    withQueue(dir, { fsync: 'always', segmentBytes: 512 }, (queue) => {
      appendRange(queue, 1, 60);
      const full = segmentFiles(dir).length;
      expect(full).toBeGreaterThan(4);
      expect(queue.stats().segments).toBe(full);
      queue.ack(30);
      const some = segmentFiles(dir).length;
      expect(some).toBeLessThan(full);
      expect(some).toBeGreaterThan(1);
      queue.ack(60);
      expect(segmentFiles(dir)).toHaveLength(1);
      const sizes = segmentFiles(dir).reduce((sum, file) => sum + statSync(file).size, 0);
      expect(queue.stats()).toMatchObject({ segments: 1, bytes: sizes });
    });
  });

  it('deletes acknowledged segments only once the ack is synced', () => {
    const dir = freshDir();
    withQueue(dir, { fsync: 'interval', fsyncIntervalMs: 3_600_000, segmentBytes: 512 }, (queue) => {
      appendRange(queue, 1, 60);
      const full = segmentFiles(dir).length;
      queue.ack(60);
      expect(segmentFiles(dir)).toHaveLength(full);
    });
    expect(segmentFiles(dir)).toHaveLength(1);
  });

  it('drops a record torn at any byte, and appends cleanly after it', () => {
    const dir = freshDir();
    let before = 0;
    withQueue(dir, { fsync: 'never' }, (queue) => {
      appendRange(queue, 1, 4);
      before = statSync(segmentFiles(dir)[0]).size;
      appendRange(queue, 5, 5);
    });
    const [file] = segmentFiles(dir);
    const after = statSync(file).size;
    expect(after).toBeGreaterThan(before);

    // Every length the file can have with part of record 5 written.
    for (let cut = before; cut < after; cut++) {
      const copy = freshDir();
      cpSync(dir, copy, { recursive: true });
      truncateSync(join(copy, basename(file)), cut);
      withQueue(copy, { fsync: 'never' }, (queue) => {
        expect(loadAll(queue)).toEqual(expected([1, 2, 3, 4]));
        expect(queue.stats()).toMatchObject({ truncatedBytes: cut - before, skippedRecords: cut > before ? 1 : 0, nextSeq: 5 });
        appendRange(queue, 5, 5);
      });
      withQueue(copy, { fsync: 'never' }, (queue) => {
        expect(loadAll(queue)).toEqual(expected([1, 2, 3, 4, 5]));
        expect(queue.stats()).toMatchObject({ truncatedBytes: 0, skippedRecords: 0 });
      });
    }
  });

  it('drops a last record whose bytes are wrong, and a tail of zeros a power cut left', () => {
    const dir = freshDir();
    withQueue(dir, {}, (queue) => appendRange(queue, 1, 5));
    const [file] = segmentFiles(dir).slice(-1);
    const bytes = readFileSync(file);
    bytes[bytes.length - 3] ^= 0x01;
    writeFileSync(file, Buffer.concat([bytes, Buffer.alloc(4096)]));
    withQueue(dir, {}, (queue) => {
      expect(loadAll(queue)).toEqual(expected([1, 2, 3, 4]));
      expect(queue.stats().truncatedBytes).toBe(4096 + bytes.length - bytes.lastIndexOf(0x0a, bytes.length - 2) - 1);
    });
  });

  it('skips a damaged record inside a segment and keeps the rest', () => {
    const dir = freshDir();
    withQueue(dir, { segmentBytes: 512 }, (queue) => range(1, 40).forEach((seq) => queue.append(seq, 1, seq, 0)));
    const files = segmentFiles(dir);
    expect(files.length).toBeGreaterThan(2);
    const damaged: number[] = [];
    for (const file of [files[0], files[files.length - 1]]) {
      // Line 0 is the segment's checkpoint; line 2 is a sample with more after it, so not a torn tail.
      const lines = readFileSync(file, 'latin1').split('\n');
      damaged.push(JSON.parse(lines[2].slice(9)).s);
      lines[2] = (lines[2][0] === '0' ? '1' : '0') + lines[2].slice(1);
      writeFileSync(file, lines.join('\n'), 'latin1');
    }
    withQueue(dir, { segmentBytes: 512 }, (queue) => {
      // Opening reads the newest segment only; the older one's damage is met when the samples are read.
      expect(queue.stats()).toMatchObject({ skippedRecords: 1, truncatedBytes: 0 });
      expect(loadAll(queue).map((s) => s.seq)).toEqual(range(1, 40).filter((seq) => !damaged.includes(seq)));
      expect(queue.stats()).toMatchObject({ skippedRecords: 2, truncatedBytes: 0 });
      loadAll(queue);
      expect(queue.stats().skippedRecords).toBe(2);
    });
  });

  it('refuses an append past maxBytes, writing nothing, and takes appends again once acks free whole segments', () => {
    withQueue(freshDir(), { fsync: 'interval', fsyncIntervalMs: 3_600_000, segmentBytes: 512, maxBytes: 2048 }, (queue) => {
      let seq = 1;
      while (seq < 200 && queue.append(seq, 1, 'sample ' + seq, 0)) seq++;
      const full = seq;
      expect(full).toBeLessThan(200);
      const used = queue.usedBytes();
      expect(used).toBe(queue.stats().bytes);
      expect(used).toBeLessThanOrEqual(2048);
      expect(queue.append(full, 1, 'sample ' + full, 0)).toBe(false);
      expect(queue.usedBytes()).toBe(used);
      expect(queue.stats().nextSeq).toBe(full);
      queue.ack(full - 1);
      expect(queue.append(full, 1, 'sample ' + full, 0)).toBe(true);
      expect(loadAll(queue)).toEqual([{ seq: full, resource: 1, value: 'sample ' + full }]);
    });
  });

  it('syncs as its policy says', async () => {
    const counts: Record<string, number> = {};
    for (const fsync of ['always', 'interval', 'never'] as const) {
      const queue = openDurableQueue(freshDir(), { fsync, fsyncIntervalMs: 3_600_000 });
      appendRange(queue, 1, 10);
      queue.ack(4);
      counts[fsync] = queue.stats().syncs;
      queue.close();
      counts[fsync + ' closed'] = queue.stats().syncs;
    }
    // always: the opening checkpoint, each append and the ack; interval: nothing due yet, one on close.
    expect(counts).toEqual({ always: 12, 'always closed': 12, interval: 0, 'interval closed': 1, never: 0, 'never closed': 0 });

    const queue = openDurableQueue(freshDir(), { fsync: 'interval', fsyncIntervalMs: 10 });
    try {
      appendRange(queue, 1, 3);
      // The timer syncs without further calls; the loop is bounded by the test's timeout.
      while (queue.stats().syncs === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(queue.stats().syncs).toBeGreaterThan(0);
    } finally {
      queue.close();
    }
  });

  it('syncs under interval once fsyncRecords records wait, before the interval is up', () => {
    withQueue(freshDir(), { fsync: 'interval', fsyncIntervalMs: 3_600_000, fsyncRecords: 5 }, (queue) => {
      // The opening checkpoint is the first record: the fifth write is the fourth sample.
      appendRange(queue, 1, 3);
      expect(queue.stats()).toMatchObject({ syncs: 0, unsynced: 4 });
      appendRange(queue, 4, 4);
      expect(queue.stats()).toMatchObject({ syncs: 1, unsynced: 0 });
      appendRange(queue, 5, 13);
      queue.ack(6);
      // 9 samples and an ack since: two more syncs, never more than 5 records waiting.
      expect(queue.stats()).toMatchObject({ syncs: 3, unsynced: 0 });
      appendRange(queue, 14, 16);
      expect(queue.stats()).toMatchObject({ syncs: 3, unsynced: 3 });
    });
  });

  it('syncs on the interval in the background: an append never waits for a sync the interval owes', async () => {
    const queues = [0, 1, 2].map(() => openDurableQueue(freshDir(), { fsync: 'interval', fsyncIntervalMs: 40 }));
    const until = async (done: () => boolean) => {
      // Bounded by the test's timeout.
      while (!done()) await new Promise((resolve) => setTimeout(resolve, 5));
    };
    try {
      // The opening checkpoints are synced by the timer; then the interval has long passed.
      await until(() => queues.every((q) => q.stats().unsynced === 0));
      await new Promise((resolve) => setTimeout(resolve, 100));
      for (const queue of queues) {
        const before = queue.stats().syncs;
        appendRange(queue, 1, 2);
        expect(queue.stats()).toMatchObject({ syncs: before, unsynced: 2 });
      }
      await until(() => queues.every((q) => q.stats().unsynced === 0));
      for (const queue of queues) expect(loadAll(queue)).toEqual(expected([1, 2]));
    } finally {
      for (const queue of queues) queue.close();
    }
  });

  it('allows one open queue per directory, and none after close', () => {
    const dir = freshDir();
    const queue = openDurableQueue(dir);
    expect(() => openDurableQueue(dir)).toThrow(/already open/);
    queue.close();
    expect(() => queue.append(1, 1, 1, 0)).toThrow(/closed/);
    withQueue(dir, {}, (again) => again.append(1, 1, 1, 0));
  });

  it('names every bad option at once', () => {
    expect(() => openDurableQueue(freshDir(), { fsync: 'sometimes' as FsyncPolicy, fsyncRecords: 0, segmentBytes: 4096, maxBytes: 1024 })).toThrow(
      /fsync: .*; fsyncRecords: .*; maxBytes: /,
    );
  });

  it('keeps every sample whose append returned across ten SIGKILLs at random moments', async () => {
    const script = await bundle('./queue-writer.ts', scratch);
    const dir = freshDir();
    const random = createRandom(20261121);
    const policies: FsyncPolicy[] = ['never', 'interval', 'always'];
    const returned = new Set<number>();
    const inFlight = new Set<number>();
    let acked = 0;
    let maxReturned = 0;
    const summary = { appends: 0, truncatedBytes: 0, skippedRecords: 0 };

    for (let run = 0; run < 10; run++) {
      const child = spawn(process.execPath, [script, dir, policies[run % 3]], { stdio: ['ignore', 'pipe', 'inherit'] });
      let next = 0;
      let last = 0;
      const lines = createInterface({ input: child.stdout! });
      const ready = new Promise<void>((resolve) =>
        lines.on('line', (line) => {
          const [what, n] = [line.split(' ')[0], Number(line.split(' ')[1])];
          if (what === 'ready') {
            next = n;
            resolve();
          } else if (what === 'appended') {
            returned.add(n);
            last = n;
            maxReturned = Math.max(maxReturned, n);
          } else if (what === 'acked') acked = Math.max(acked, n);
        }),
      );
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
      const closed = new Promise((resolve) => lines.on('close', resolve));
      await ready;
      await new Promise((resolve) => setTimeout(resolve, random() * 60));
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      await closed;
      // The append under way at the kill may or may not have reached the file.
      inFlight.add(Math.max(next, last + 1));

      withQueue(dir, { fsync: 'never' }, (queue) => {
        const loaded = loadAll(queue);
        const stats = queue.stats();
        summary.truncatedBytes += stats.truncatedBytes;
        summary.skippedRecords += stats.skippedRecords;
        // The writer acks right after printing an append: that one ack may be written but unprinted.
        expect(stats.acked).toBeGreaterThanOrEqual(acked);
        expect(stats.acked).toBeLessThanOrEqual(Math.max(acked, maxReturned - ACK_LAG));
        const seqs = loaded.map((s) => s.seq);
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
        expect(new Set(seqs).size).toBe(seqs.length);
        expect(seqs.every((seq) => seq > stats.acked && (returned.has(seq) || inFlight.has(seq)))).toBe(true);
        const owed = [...returned].filter((seq) => seq > stats.acked);
        expect(seqs.filter((seq) => returned.has(seq))).toEqual(owed.sort((a, b) => a - b));
        expect(loaded).toEqual(expected(seqs));
        expect(queue.load(() => {})).toBeGreaterThan(maxReturned);
      });
    }
    summary.appends = returned.size;
    console.log('crash test:', JSON.stringify({ ...summary, acked }));
    expect(returned.size).toBeGreaterThan(ACK_LAG);
  });
});
