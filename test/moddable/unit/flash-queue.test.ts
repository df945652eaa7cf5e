// The flash queue (platforms/moddable/storage/flash-queue.ts) on the file stand-in over real files: what a
// reboot restores and with which times, what each record costs, when it writes and what it never
// rewrites, how it stays within its bound, the batch out in a request, and what it makes of damage.
import { appendFileSync, readFileSync, readdirSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { InFlight, SampleValue } from '../../../src/core/host/host';
import { openFlashQueue } from '../../../platforms/moddable/storage/flash-queue';
import type { FlashQueue, FlashQueueOptions } from '../../../platforms/moddable/storage/flash-queue';
import type { FileClass } from '../../../platforms/moddable/storage/file-module';
import { Disk } from '../../support/disk';
import { fileStandIn, fileSystemStandIn } from '../standins/file';

const PATH = '/feed-agent.q';
/** A wall clock as SNTP sets it (24 Nov 2026), and one before it is set (1970 plus the uptime). */
const WALL = 1795478400000;
let disk: Disk;

afterEach(() => disk?.remove());

type Sample = [number, number, SampleValue, number];

interface Clocks {
  now?: () => number;
  wall?: () => number;
}

function open(options: Partial<FlashQueueOptions> = {}, log?: string[], File?: FileClass): FlashQueue {
  disk ??= new Disk();
  const link = (op: Parameters<Disk['run']>[0]) => disk.run(op);
  return openFlashQueue(fileSystemStandIn(link, File ?? fileStandIn(link)), { path: PATH, log: log && ((m) => void log.push(m)), ...options });
}

/** What a reboot finds: a new queue on the same disk, the samples it gives back (at most `max`), and its next sequence number. */
function reboot(options: Partial<FlashQueueOptions> = {}, log?: string[], max?: number) {
  const queue = open(options, log);
  const samples: Sample[] = [];
  const next = queue.load((seq, resource, value, at) => void samples.push([seq, resource, value, at]), max);
  return { queue, samples, next };
}

/** Appends samples `from` … `from + count - 1` of resource 7, one a second from `at0`, in one burst. */
function burst(queue: FlashQueue, from: number, count: number, value = (seq: number): SampleValue => seq * 1.5, at0 = 0): void {
  for (let seq = from; seq < from + count; seq++) expect(queue.append(seq, 7, value(seq), at0 + seq * 1000)).toBe(true);
  queue.commit();
}

const files = (): string[] => readdirSync(disk.root).sort();
const size = (name: string): number => statSync(join(disk.root, name)).size;
const seqs = (samples: Sample[]): number[] => samples.map(([seq]) => seq);
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** A batch as the agent hands it to `sending`. */
function batch(firstSeq: number, lastSeq: number): InFlight {
  return { firstSeq, lastSeq, count: lastSeq - firstSeq + 1, size: 2, resources: Uint32Array.of(7, 9), lastIds: Float64Array.of(120, -1) };
}

describe('the flash queue', () => {
  it('gives back after a reboot every sample not finished, of every kind, in order, with its resource', () => {
    disk = new Disk();
    const queue = open();
    expect(queue.load(() => undefined)).toBe(0);
    const values: SampleValue[] = [21.25, -0, 7, -2147483648, 2147483648, true, false, '', 'ação ☃ 😀', 1e300, Number.MIN_VALUE];
    values.forEach((v, i) => expect(queue.append(i, 100 + (i % 3), v, i * 10)).toBe(true));
    queue.commit();
    queue.ack(2);
    queue.close();
    const { samples, next } = reboot();
    expect(samples.map(([seq, resource, value]) => [seq, resource, value])).toEqual(values.slice(3).map((v, i) => [i + 3, 100 + ((i + 3) % 3), v]));
    expect(next).toBe(values.length);
  });

  it('keeps -0 as -0', () => {
    disk = new Disk();
    const queue = open();
    queue.load(() => undefined);
    queue.append(0, 7, -0, 0);
    queue.commit();
    expect(Object.is(reboot().samples[0][2], -0)).toBe(true);
  });

  it('takes 7 bytes for a 32-bit integer and 11 for another number, after a 20-byte header and a resource\'s 5 bytes; a time in full only when the gap is over 65.5 s', () => {
    disk = new Disk();
    const queue = open();
    queue.load(() => undefined);
    // Seconds apart from 0 ms: the deltas fit.
    for (let seq = 0; seq < 100; seq++) queue.append(seq, 7, seq, seq * 1000);
    queue.commit();
    expect(files()).toEqual(['feed-agent.q.0']);
    expect(size('feed-agent.q.0')).toBe(20 + 5 + 100 * 7);
    for (let seq = 100; seq < 200; seq++) queue.append(seq, 7, seq + 0.5, seq * 1000);
    // Then one two minutes on: 9 bytes of time first.
    queue.append(200, 7, 1, 320_000);
    queue.commit();
    expect(size('feed-agent.q.0')).toBe(20 + 5 + 100 * 7 + 100 * 11 + 9 + 7);
    expect(queue.usedBytes()).toBe(4096);
  });

  it('writes nothing while it holds nothing: an acknowledgement or a batch of samples it never held leave no file', () => {
    disk = new Disk();
    const queue = open();
    queue.load(() => undefined);
    queue.ack(40);
    queue.sending(batch(41, 50));
    queue.commit();
    queue.close();
    expect(files()).toEqual([]);
    expect(queue.stats()).toEqual({ bytes: 0, segments: 0, writes: 0, lost: 0 });
  });

  it('fills segments of whole littlefs blocks, renames each complete one with its last sample, never writes it again, and deletes it once finished', () => {
    disk = new Disk();
    const link = (op: Parameters<Disk['run']>[0]) => disk.run(op);
    const Base = fileStandIn(link);
    const written: string[] = [];
    class Watched extends Base {
      constructor(readonly path: string, write?: boolean) {
        super(path, write);
      }
      override write(...items: (ArrayBuffer | number)[]): void {
        written.push(this.path);
        super.write(...items);
      }
    }
    const queue = open({ segmentBlocks: 1 }, undefined, Watched);
    queue.load(() => undefined);
    // One block of 4,096 bytes: the header, a resource, then 581 integers of 7 bytes; the next segment's
    // first sample needs its time in full (9 bytes), so it holds 580.
    burst(queue, 0, 1000, (seq) => seq);
    expect(files()).toEqual(['feed-agent.q.0-580', 'feed-agent.q.581']);
    expect(size('feed-agent.q.0-580')).toBe(20 + 5 + 581 * 7);
    written.length = 0;
    burst(queue, 1000, 200, (seq) => seq);
    expect(new Set(written)).toEqual(new Set([PATH + '.581', PATH + '.1161']));
    expect(files()).toEqual(['feed-agent.q.0-580', 'feed-agent.q.1161', 'feed-agent.q.581-1160']);
    queue.ack(1160);
    expect(files()).toEqual(['feed-agent.q.1161']);
    queue.ack(1199);
    expect(files()).toEqual([]);
    expect(queue.stats().segments).toBe(0);
  });

  it('stays within maxBytes: refuses a sample at its bound, counts whole blocks, and gives up its oldest segment beyond `after` on discard', () => {
    disk = new Disk();
    const queue = open({ segmentBlocks: 1, maxBytes: 4 * 4096 });
    queue.load(() => undefined);
    // Three blocks of segments and one for the state: 581 + 580 + 580 samples.
    let seq = 0;
    while (queue.append(seq, 7, seq, seq * 1000)) seq++;
    queue.commit();
    expect(seq).toBe(1741);
    expect(queue.usedBytes()).toBe(3 * 4096);
    expect(queue.usedBytes()).toBeLessThanOrEqual(queue.maxBytes);
    // The window holds 0 … 99: the oldest segment holds some of them, so the next one goes.
    expect(queue.discard(99)).toBe(580);
    expect(files()).toEqual(['feed-agent.q.0-580', 'feed-agent.q.1161']);
    expect(queue.append(seq, 7, seq, seq * 1000)).toBe(true);
    queue.commit();
    expect(files()).toEqual(['feed-agent.q.0-580', 'feed-agent.q.1161-1740', 'feed-agent.q.1741']);
    const got: number[] = [];
    // A read from inside the gap goes on with the first sample after it.
    const next = queue.read(600, 5, (s) => void got.push(s));
    expect([got, next]).toEqual([range(1161, 1165), 1166]);
  });

  it('never gives up the segment it writes', () => {
    disk = new Disk();
    const queue = open();
    queue.load(() => undefined);
    burst(queue, 0, 10);
    expect(queue.discard(-1)).toBe(0);
    expect(files()).toEqual(['feed-agent.q.0']);
  });

  it('reads a few at a time from any sequence number, across segments, and says where to go on', () => {
    disk = new Disk();
    const queue = open({ segmentBlocks: 1 });
    queue.load(() => undefined);
    burst(queue, 0, 1500);
    const got: number[] = [];
    let from = 0;
    for (let reads = 0; from < 1500; reads++) {
      expect(reads).toBeLessThan(20);
      from = queue.read(from, 100, (s) => void got.push(s));
    }
    expect(got).toEqual(range(0, 1499));
    expect(from).toBe(1500);
    // A visitor that declines stops there, and that sample is where the next read starts.
    const some: number[] = [];
    expect(queue.read(570, 100, (s) => (s < 575 ? void some.push(s) : false))).toBe(575);
    expect(some).toEqual(range(570, 574));
    // Past what is finished only.
    queue.ack(1200);
    const rest: number[] = [];
    expect(queue.read(0, 1000, (s) => void rest.push(s))).toBe(1500);
    expect(rest).toEqual(range(1201, 1499));
  });

  it('gives back at load no more than it is asked for', () => {
    disk = new Disk();
    const queue = open();
    queue.load(() => undefined);
    burst(queue, 0, 300);
    const { samples, next } = reboot({}, undefined, 16);
    expect([seqs(samples), next]).toEqual([range(0, 15), 300]);
  });

  it('keeps each sample\'s time: as it was in the same boot; across a reboot by the wall clock when both boots knew it; otherwise none', () => {
    disk = new Disk();
    let now = 5_000;
    const clocks = (wall: number | null): Clocks => ({ now: () => now, wall: () => (wall === null ? now : wall + now) });
    const queue = open(clocks(WALL));
    queue.load(() => undefined);
    for (let seq = 0; seq < 5; seq++) queue.append(seq, 7, seq, 1_000 + seq * 250.4);
    queue.commit();
    const same: number[] = [];
    queue.read(0, 10, (_s, _r, _v, at) => void same.push(at));
    expect(same).toEqual([1000, 1250, 1501, 1751, 2002]);
    // The next boot's clock starts at 0, an hour after the first boot's 5 s.
    now = 0;
    const later = reboot(clocks(WALL + 3_600_000 + 5_000)).samples.map(([, , , at]) => at);
    expect(later).toEqual([1000, 1250, 1501, 1751, 2002].map((at) => at - 3_605_000));
    // A boot without wall time: undated.
    expect(reboot(clocks(null)).samples.every(([, , , at]) => Number.isNaN(at))).toBe(true);
    // Without the host's clock, the queue cannot tell.
    expect(reboot({ wall: () => WALL }).samples.every(([, , , at]) => Number.isNaN(at))).toBe(true);
  });

  it('starts a new segment when the wall time becomes known, so that the samples after it keep their time across a reboot', () => {
    disk = new Disk();
    let wall = 20_000;
    const options = { now: () => 0, wall: () => wall };
    const queue = open(options);
    queue.load(() => undefined);
    burst(queue, 0, 3, (seq) => seq, 0);
    wall = WALL;
    burst(queue, 3, 3, (seq) => seq, 0);
    expect(files()).toEqual(['feed-agent.q.0-2', 'feed-agent.q.3']);
    const ats = reboot(options).samples.map(([, , , at]) => at);
    expect(ats.slice(0, 3).every(Number.isNaN)).toBe(true);
    expect(ats.slice(3)).toEqual([3000, 4000, 5000]);
  });

  it('keeps the batch out in a request only when it was read from flash, and gives it back after a reboot', () => {
    disk = new Disk();
    const queue = open();
    queue.load(() => undefined);
    burst(queue, 0, 30);
    // Samples in memory only, past the newest on flash: nothing written.
    queue.sending(batch(25, 40));
    expect(files()).toEqual(['feed-agent.q.0']);
    queue.ack(9);
    queue.sending(batch(10, 19));
    expect(files()).toEqual(['feed-agent.q.0', 'feed-agent.q.out']);
    const { queue: again, samples } = reboot();
    expect(again.inFlight()).toEqual(batch(10, 19));
    expect(seqs(samples)).toEqual(range(10, 29));
    // Everything finished: the segments and the state go.
    again.ack(29);
    expect(files()).toEqual([]);
    expect(reboot().queue.inFlight()).toBeNull();
  });

  it('writes what is finished at close, and a reboot then gives back only the rest', () => {
    disk = new Disk();
    const queue = open();
    queue.load(() => undefined);
    burst(queue, 0, 30);
    queue.ack(19);
    queue.close();
    expect(seqs(reboot().samples)).toEqual(range(20, 29));
  });

  it('reads a state that fails its checksum as none', () => {
    disk = new Disk();
    const queue = open();
    queue.load(() => undefined);
    burst(queue, 0, 30);
    queue.ack(9);
    queue.sending(batch(10, 19));
    const state = join(disk.root, 'feed-agent.q.out');
    const bytes = readFileSync(state);
    bytes[5] ^= 1;
    writeFileSync(state, bytes);
    const { queue: again, samples } = reboot();
    expect(again.inFlight()).toBeNull();
    expect(seqs(samples)).toEqual(range(0, 29));
  });

  it('keeps the whole records of a segment whose tail a crash cut short', () => {
    disk = new Disk();
    const queue = open();
    queue.load(() => undefined);
    burst(queue, 0, 4);
    appendFileSync(join(disk.root, 'feed-agent.q.0'), Buffer.from([0, 9, 9, 9]));
    const log: string[] = [];
    const { queue: again, samples, next } = reboot({}, log);
    expect([seqs(samples), next]).toEqual([[0, 1, 2, 3], 4]);
    expect(log.join('\n')).toMatch(/4 bytes of \/feed-agent\.q\.0 are not whole records; they are dropped/);
    // Appending goes on in a segment of its own.
    burst(again, 4, 1);
    expect(seqs(reboot().samples)).toEqual([0, 1, 2, 3, 4]);
  });

  it('when a write fails half way, keeps the whole records it has, completes the segment there and says what was lost', () => {
    disk = new Disk();
    const link = (op: Parameters<Disk['run']>[0]) => disk.run(op);
    const Base = fileStandIn(link);
    let tear = false;
    // A write that puts 2 bytes of its record on the disk and then fails, as a full or failing disk may.
    class TearingFile extends Base {
      override write(...items: (ArrayBuffer | number)[]): void {
        if (!tear) return super.write(...items);
        tear = false;
        super.write(...items.slice(0, 2));
        throw new Error('write failed');
      }
    }
    const log: string[] = [];
    const queue = open({}, log, TearingFile);
    queue.load(() => undefined);
    burst(queue, 0, 3);
    queue.append(3, 7, 4.5, 3000);
    tear = true;
    expect(() => queue.append(4, 7, 6, 4000)).toThrow('write failed');
    burst(queue, 5, 2);
    expect(files()).toEqual(['feed-agent.q.0-3', 'feed-agent.q.5']);
    // No sample lost: the one whose write failed was refused (the agent counts it).
    expect(log).toEqual(['flash queue: 2 bytes of /feed-agent.q.0 are not whole records; they are dropped']);
    expect(queue.stats().lost).toBe(0);
    expect(seqs(reboot().samples)).toEqual([0, 1, 2, 3, 5, 6]);
  });

  it('finds a burst that was not committed (littlefs drops a burst whose close failed) at the next one, and says how many samples it lost', () => {
    disk = new Disk();
    const log: string[] = [];
    const queue = open({}, log);
    queue.load(() => undefined);
    burst(queue, 0, 10, (seq) => seq);
    // The last burst's 5 samples of 7 bytes did not reach the flash.
    burst(queue, 10, 5, (seq) => seq);
    truncateSync(join(disk.root, 'feed-agent.q.0'), size('feed-agent.q.0') - 5 * 7);
    burst(queue, 15, 5, (seq) => seq);
    expect(log.join('\n')).toMatch(/its last burst was not committed in \/feed-agent\.q\.0; 5 samples lost/);
    expect(queue.stats().lost).toBe(5);
    expect(seqs(reboot().samples)).toEqual([...range(0, 9), ...range(15, 19)]);
  });

  it('drops the journal of an earlier firmware, saying so', () => {
    disk = new Disk();
    writeFileSync(join(disk.root, 'feed-agent.q'), 'FAQ1 and some records');
    const log: string[] = [];
    const { samples, next } = reboot({}, log);
    expect([samples, next]).toEqual([[], 0]);
    expect(log.join('\n')).toMatch(/dropped \/feed-agent\.q, 21 bytes of the journal of an earlier firmware/);
    expect(files()).toEqual([]);
  });

  it('ignores files that are not its own, and a segment whose header is not one', () => {
    disk = new Disk();
    writeFileSync(join(disk.root, 'feed-agent.q.notes'), 'mine');
    writeFileSync(join(disk.root, 'feed-agent.q.12'), 'not a segment at all');
    const log: string[] = [];
    const { samples, next } = reboot({}, log);
    expect([samples, next]).toEqual([[], 0]);
    expect(log.join('\n')).toMatch(/20 bytes of \/feed-agent\.q\.12 are not whole records/);
    expect(files()).toEqual(['feed-agent.q.notes']);
  });

  it('refuses options that cannot work', () => {
    expect(() => open({ spillEvery: 0 })).toThrow(RangeError);
    expect(() => open({ maxBytes: 8192 })).toThrow(/maxBytes/);
    expect(() => open({ segmentBlocks: 0 })).toThrow(/segmentBlocks/);
  });
});
