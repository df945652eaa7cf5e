// The flash queue (platforms/moddable/flash-queue.ts) on the file stand-in over real files: what a
// reboot restores, when it writes, how it stays within its bound, and what it makes of a damaged file.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SampleValue } from '../../src/core/host';
import { openFlashQueue } from '../../platforms/moddable/flash-queue';
import type { FlashQueueOptions } from '../../platforms/moddable/flash-queue';
import { Disk } from '../support/disk';
import { fileStandIn } from './standins/file';

const PATH = '/feed-agent.q';
let disk: Disk;

afterEach(() => disk?.remove());

function open(options: Partial<FlashQueueOptions> = {}, log?: string[]) {
  disk ??= new Disk();
  return openFlashQueue(fileStandIn((op) => disk.run(op)), { path: PATH, log: log && ((m) => void log.push(m)), ...options });
}

/** What a reboot finds: a new queue on the same disk, and the samples it gives back. */
function reboot(options: Partial<FlashQueueOptions> = {}, log?: string[]) {
  const queue = open(options, log);
  const samples: [number, number, SampleValue][] = [];
  const next = queue.load((seq, resource, value) => void samples.push([seq, resource, value]));
  return { queue, samples, next };
}

function burst(queue: ReturnType<typeof open>, from: number, count: number, value = (seq: number): SampleValue => seq * 1.5): void {
  for (let seq = from; seq < from + count; seq++) queue.append(seq, 7, value(seq), 0);
  queue.commit();
}

describe('the flash queue', () => {
  it('gives back after a reboot every sample not acknowledged, of every kind, in order', () => {
    disk = new Disk();
    const queue = open();
    expect(queue.load(() => undefined)).toBe(0);
    const values: SampleValue[] = [21.25, -0, true, false, '', 'ação ☃ 😀', 1e300];
    values.forEach((v, i) => queue.append(i, 100 + i, v, 0));
    queue.commit();
    queue.ack(2);
    const { samples, next } = reboot();
    expect(samples).toEqual(values.slice(3).map((v, i) => [i + 3, 103 + i, v]));
    expect(next).toBe(values.length);
    // One burst and one acknowledgement: two writes of the flash.
    expect(queue.stats()).toMatchObject({ writes: 2 });
  });

  it('deletes the journal once everything it holds is acknowledged, and writes nothing for an acknowledgement past it', () => {
    disk = new Disk();
    const queue = open();
    queue.load(() => undefined);
    burst(queue, 0, 5);
    queue.ack(4);
    expect(queue.stats().bytes).toBe(0);
    const { samples, next } = reboot();
    expect([samples, next]).toEqual([[], 0]);
  });

  it('reads a burst written twice (a write failed half way, then was repeated) once', () => {
    disk = new Disk();
    const queue = open();
    queue.load(() => undefined);
    burst(queue, 0, 3);
    burst(queue, 1, 4);
    expect(reboot().samples.map(([seq]) => seq)).toEqual([0, 1, 2, 3, 4]);
  });

  it('stays within maxBytes: acknowledged records go first, then the oldest samples give way', () => {
    disk = new Disk();
    const log: string[] = [];
    // A number sample is 21 bytes: 600 bytes hold the mark and 28 of them.
    const queue = open({ maxBytes: 600 }, log);
    queue.load(() => undefined);
    burst(queue, 0, 20);
    queue.ack(14);
    burst(queue, 20, 20);
    expect(queue.stats()).toMatchObject({ compactions: 1, dropped: 0 });
    expect(queue.stats().bytes).toBeLessThanOrEqual(600);
    burst(queue, 40, 30);
    const stats = queue.stats();
    expect(stats.bytes).toBeLessThanOrEqual(600);
    expect(stats.dropped).toBeGreaterThan(0);
    expect(log.join('\n')).toMatch(/oldest samples are now kept in memory only/);
    const seqs = reboot({ maxBytes: 600 }).samples.map(([seq]) => seq);
    // The newest ones, without a gap, up to the last.
    expect(seqs[seqs.length - 1]).toBe(69);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => 70 - seqs.length + i));
  });

  it('keeps the whole records of a file whose tail a crash cut short, and rewrites it', () => {
    disk = new Disk();
    const queue = open();
    queue.load(() => undefined);
    burst(queue, 0, 4);
    const file = join(disk.root, PATH);
    const whole = readFileSync(file).length;
    appendFileSync(file, Buffer.from([1, 9, 9, 9]));
    const log: string[] = [];
    const { queue: again, samples } = reboot({}, log);
    expect(samples.map(([seq]) => seq)).toEqual([0, 1, 2, 3]);
    expect(log.join('\n')).toMatch(/4 bytes .* are not whole records/);
    expect(readFileSync(file).length).toBe(whole);
    // Appending goes on after the whole records, not after the damage.
    burst(again, 4, 1);
    expect(reboot().samples.map(([seq]) => seq)).toEqual([0, 1, 2, 3, 4]);
  });

  it('goes on after the last whole write when a write failed half way (a file system without atomic commits)', () => {
    disk = new Disk();
    const File = fileStandIn((op) => disk.run(op));
    let tear = false;
    // A write that puts 5 bytes of its record on the disk and then fails, as a full or failing disk may.
    class TearingFile extends File {
      override write(...items: ArrayBuffer[]): void {
        if (!tear) return super.write(...items);
        tear = false;
        super.write(items[0].slice(0, 5));
        throw new Error('write failed');
      }
    }
    const queue = openFlashQueue(TearingFile, { path: PATH });
    queue.load(() => undefined);
    burst(queue, 0, 3);
    tear = true;
    expect(() => queue.append(3, 7, 4.5, 0)).toThrow('write failed');
    burst(queue, 3, 2);
    expect(reboot().samples.map(([seq]) => seq)).toEqual([0, 1, 2, 3, 4]);
  });

  it('drops a file that is not a journal, saying so', () => {
    disk = new Disk();
    writeFileSync(join(disk.root, PATH), 'not a journal at all');
    const log: string[] = [];
    const { samples, next } = reboot({}, log);
    expect([samples, next]).toEqual([[], 0]);
    expect(log.join('\n')).toMatch(/not whole records; they are dropped/);
    expect(disk.run({ op: 'exists', path: PATH })).toBe(false);
  });

  it('refuses options that cannot work', () => {
    expect(() => open({ spillEvery: 0 })).toThrow(RangeError);
    expect(() => open({ maxBytes: 100 })).toThrow(/maxBytes/);
  });
});
