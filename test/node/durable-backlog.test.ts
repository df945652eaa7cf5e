// The durable queue as a backlog: read from a sequence number on through a cursor, the oldest whole
// segment given up beyond the window, each sample's time kept across a restart (through the wall clock),
// and an opening that reads the newest segment and the first line of the others.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it, vi } from 'vitest';

import type { SampleValue } from '../../src/core/host/host';
import type { DurableQueue } from '../../platforms/node/storage/durable-queue';
import { createRandom } from '../../src/core/host/random';
import { encodeCheckpoint, encodeSample } from '../../platforms/node/storage/log-record';
import { wallAnchor } from '../../platforms/node/storage/sample-time';
import { bundle } from './support/bundle';
import { range, scratchDirs, segmentFiles, withQueue } from './support/queues';

interface Read {
  seq: number;
  value: SampleValue;
  at: number;
}

const { scratch, freshDir } = scratchDirs('feed-agent-backlog-');
afterEach(() => vi.restoreAllMocks());

/** `read(from, max)`, with `stopAt` refused by the visit: what it visited and what it returned. */
function readSome(queue: DurableQueue, from: number, max: number, stopAt = -1): { got: Read[]; next: number } {
  const got: Read[] = [];
  const next = queue.read(from, max, (seq, _r, value, at) => {
    if (seq === stopAt) return false;
    got.push({ seq, value, at });
    return true;
  });
  return { got, next };
}

const seqs = (reads: Read[]) => reads.map((r) => r.seq);
/** The largest difference between two lists of times (Infinity when their lengths differ). */
const offBy = (got: number[], want: number[]) => (got.length !== want.length ? Infinity : Math.max(...got.map((t, i) => Math.abs(t - want[i]))));

/** The samples of `file`, by sequence number. */
function samplesIn(file: string): number[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.includes('"s":'))
    .map((line) => JSON.parse(line.slice(9)).s as number);
}

/** A segment file as an earlier run would have left it: `lines` of checkpoints and samples. */
function earlierRun(dir: string, id: number, lines: Buffer[]): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'seg-' + String(id).padStart(16, '0') + '.log'), Buffer.concat(lines));
}

describe('the durable queue as a backlog', () => {
  it('reads from a sequence number on, a few at a time, oldest first, going on where it stopped', () => {
    withQueue(freshDir(), { segmentBytes: 512 }, (queue) => {
      for (const seq of range(1, 100)) expect(queue.append(seq, 1, seq, seq * 10 + 0.7)).toBe(true);
      expect(queue.stats().segments).toBeGreaterThan(5);
      let r = readSome(queue, 1, 10);
      // This run's times come back as they were given, to the ms below.
      expect(r.got.slice(0, 2)).toEqual([
        { seq: 1, value: 1, at: 10 },
        { seq: 2, value: 2, at: 20 },
      ]);
      expect([seqs(r.got), r.next]).toEqual([range(1, 10), 11]);
      r = readSome(queue, 11, 10, 15);
      expect([seqs(r.got), r.next]).toEqual([range(11, 14), 15]);
      r = readSome(queue, 15, 1000);
      expect([seqs(r.got), r.next]).toEqual([range(15, 100), 101]);
      // Nothing left, until more is appended.
      expect(readSome(queue, 101, 10)).toEqual({ got: [], next: 101 });
      queue.append(101, 1, 101, 0);
      expect(seqs(readSome(queue, 101, 10).got)).toEqual([101]);
      // Back to an earlier place, and never below what is acknowledged.
      expect(seqs(readSome(queue, 50, 3).got)).toEqual([50, 51, 52]);
      queue.ack(60);
      expect(seqs(readSome(queue, 1, 3).got)).toEqual([61, 62, 63]);
    });
  });

  it('reads back every number as JSON would, and every boolean and string', () => {
    const random = createRandom(20261126);
    const numbers = [0, -0, 1, -1, 0.1, 1e21, 1e-7, -2.5e-300, 1.7976931348623157e308, 5e-324, 2 ** 53 + 2, 123456789012345680000];
    for (let i = 0; i < 2000; i++) numbers.push((random() - 0.5) * 10 ** Math.floor(random() * 40 - 20), Math.round((random() - 0.5) * 1e6) / 100);
    const values: SampleValue[] = [...numbers, true, false, '', '1', 'true'];
    withQueue(freshDir(), {}, (queue) => {
      values.forEach((v, i) => queue.append(i + 1, 1, v, i));
      const got: SampleValue[] = [];
      queue.read(1, values.length, (_seq, _r, value) => void got.push(value));
      expect(got).toEqual(values.map((v) => JSON.parse(JSON.stringify(v)) as SampleValue));
    });
  });

  it('reads a record longer than its chunk, and two queues read in turns each their own samples', () => {
    const long = 'é'.repeat(200_000);
    withQueue(freshDir(), {}, (one) =>
      withQueue(freshDir(), {}, (two) => {
        for (const seq of range(1, 2000)) {
          one.append(seq, 1, seq === 1000 ? long : seq, 0);
          two.append(seq, 2, -seq, 0);
        }
        const values: [SampleValue[], SampleValue[]] = [[], []];
        for (let from = [1, 1]; from[0] <= 2000 || from[1] <= 2000; ) {
          [one, two].forEach((queue, k) => {
            from[k] = queue.read(from[k], 7, (_seq, _r, value) => void values[k].push(value));
          });
        }
        expect(values[0]).toEqual(range(1, 2000).map((seq) => (seq === 1000 ? long : seq)));
        expect(values[1]).toEqual(range(1, 2000).map((seq) => -seq));
      }),
    );
  });

  it('loads no more than it is asked for at opening, and reads the rest from where loading stopped', () => {
    const dir = freshDir();
    withQueue(dir, { segmentBytes: 512 }, (queue) => {
      for (const seq of range(1, 80)) queue.append(seq, 1, seq, 0);
      queue.ack(20);
    });
    withQueue(dir, { segmentBytes: 512 }, (queue) => {
      const loaded: number[] = [];
      expect(queue.load((seq) => void loaded.push(seq), 16)).toBe(81);
      expect(loaded).toEqual(range(21, 36));
      expect(seqs(readSome(queue, 37, 1000).got)).toEqual(range(37, 80));
    });
  });

  it('gives up the oldest whole segment beyond the window at the bound, rolling the one being written when it is the only one', () => {
    const dir = freshDir();
    withQueue(dir, { segmentBytes: 256 }, (queue) => {
      for (const seq of range(1, 30)) queue.append(seq, 1, seq, 0);
      const files = segmentFiles(dir).map(samplesIn);
      expect(files.length).toBeGreaterThan(3);
      // The window holds 1 to 8: the first segment beyond it is the first that begins after 8.
      const beyond = files.findIndex((s) => s[0] > 8);
      const used = queue.usedBytes();
      expect(queue.discard(8)).toBe(files[beyond].length);
      expect(queue.usedBytes()).toBeLessThan(used);
      const left = range(1, 30).filter((seq) => !files[beyond].includes(seq));
      expect(seqs(readSome(queue, 1, 1000).got)).toEqual(left);
      // Only the one being written holds samples beyond 26: it is rolled, then given up.
      const last = segmentFiles(dir).map(samplesIn).pop()!;
      expect(last[0]).toBeGreaterThan(26);
      const count = segmentFiles(dir).length;
      expect(queue.discard(last[0] - 1)).toBe(last.length);
      expect(segmentFiles(dir)).toHaveLength(count);
      expect(queue.append(31, 1, 31, 0)).toBe(true);
      expect(seqs(readSome(queue, 1, 1000).got)).toEqual([...left.filter((seq) => !last.includes(seq)), 31]);
      // Nothing beyond the newest sample: nothing to give up.
      expect(queue.discard(31)).toBe(0);
    });
  });

  it('keeps each sample\'s time across a restart: a process killed with its samples 2, 1 and 0 s old gives them back as old as they are now', async () => {
    const dir = freshDir();
    const child = spawn(process.execPath, [await bundle('./timed-writer.ts', scratch), dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve));
    const { wall } = JSON.parse(line) as { wall: number };
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    await new Promise((resolve) => setTimeout(resolve, 300));
    withQueue(dir, {}, (queue) => {
      const ages: number[] = [];
      queue.load((_seq, _r, _v, at) => void ages.push(performance.now() - at));
      const since = Date.now() - wall;
      expect(since).toBeGreaterThanOrEqual(300);
      // Whole ms on both sides of the conversion: within a few ms.
      expect(offBy(ages, [since + 2_000, since + 1_000, since])).toBeLessThan(5);
    });
  });

  it('converts an earlier run\'s times through the anchor in force where each was written: none when it would lie ahead of now, none out of order', () => {
    const dir = freshDir();
    const anchor = wallAnchor();
    const base = Math.floor(performance.now());
    earlierRun(dir, 1, [
      // A run that began 10 s before this one: its time 5,000 is 5 s before this one's zero.
      encodeCheckpoint(0, 1, anchor - 10_000),
      encodeSample(1, 1, 1, 5_000),
      // Its wall clock set back a minute (a checkpoint with the new anchor): sample 2 would come before 1.
      encodeCheckpoint(0, 2, anchor - 70_000),
      encodeSample(2, 1, 2, 6_000),
      encodeSample(3, 1, 3, base - 1_000 + 70_000),
      // A wall clock an hour ahead: ahead of now.
      encodeCheckpoint(0, 4, anchor + 3_600_000),
      encodeSample(4, 1, 4, base),
      // No anchor known (a log of an earlier version), and no time.
      encodeCheckpoint(0, 5),
      encodeSample(5, 1, 5, 8_000),
      encodeCheckpoint(0, 6, anchor),
      encodeSample(6, 1, 6),
    ]);
    withQueue(dir, {}, (queue) => {
      const got = readSome(queue, 1, 100).got.map((r) => r.at);
      // Both anchors are read from a clock of whole ms: within 2 ms.
      expect(offBy(got.slice(0, 3), [-5_000, -5_000, base - 1_000])).toBeLessThanOrEqual(2);
      expect(got.slice(3)).toEqual([NaN, NaN, NaN]);
    });
  });

  it('writes the new anchor when the wall clock is set: this run\'s times stay exact, an earlier run\'s follow the clock they were taken under', () => {
    const dir = freshDir();
    const realNow = Date.now.bind(Date);
    const base = Math.floor(performance.now());
    withQueue(dir, {}, (queue) => {
      queue.append(1, 1, 1, base - 2_000);
      // An NTP step: the wall clock was an hour behind.
      vi.spyOn(Date, 'now').mockImplementation(() => realNow() + 3_600_000);
      queue.append(2, 1, 2, base - 1_000);
      expect(readSome(queue, 1, 10).got.map((r) => r.at)).toEqual([base - 2_000, base - 1_000]);
    });
    const lines = readFileSync(segmentFiles(dir)[0], 'utf8').split('\n');
    expect(lines.filter((l) => l.includes('"w":')).length).toBe(2);
    withQueue(dir, {}, (queue) => {
      // Read by a later run (here the same process, the clock still an hour on): 2 as it was; 1 an hour older.
      expect(offBy(readSome(queue, 1, 10).got.map((r) => r.at), [base - 2_000 - 3_600_000, base - 1_000])).toBeLessThanOrEqual(2);
    });
  });

  it('reads through a segment whose leading checkpoint is damaged: no sample lost, no sequence number used twice', () => {
    const dir = freshDir();
    withQueue(dir, { segmentBytes: 256 }, (queue) => {
      for (const seq of range(1, 40)) queue.append(seq, 1, seq, 0);
      queue.ack(3);
    });
    const files = segmentFiles(dir);
    expect(files.length).toBeGreaterThan(3);
    // The newest segment's checkpoint: the highest sequence number is then the one before's to say.
    for (const file of [files[1], files[files.length - 1]]) {
      const bytes = readFileSync(file);
      bytes[0] = bytes[0] === 0x30 ? 0x31 : 0x30;
      writeFileSync(file, bytes);
    }
    withQueue(dir, { segmentBytes: 256 }, (queue) => {
      expect(queue.stats()).toMatchObject({ acked: 3, nextSeq: 41 });
      const loaded: number[] = [];
      queue.load((seq) => void loaded.push(seq));
      expect(loaded).toEqual(range(4, 40));
      expect(queue.stats().skippedRecords).toBe(2);
    });
  });
});
