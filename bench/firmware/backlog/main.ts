// The flash queue on littlefs, filled to its bound with the firmware's defaults: its four sensor roles
// (uptime, heap, RSSI and temperature: three integers and a number with a tenth) sampled every 10 s, written
// in the core's bursts of 64, as an outage writes them. Then the same with every number a float, and
// today's design for the baseline: the journal of 21-byte records in one file, bounded at 24 KiB. The build
// line's `runs` names the runs (firmware, floats, esp32, journal), `esp32BacklogBytes` the esp32 run's bound;
// the esp32 run then turns its bound over three times, for littlefs's room to spare.
// It first traces `backlog: disk D`, the file system's size; then each run starts on an empty file system
// and traces one line (bench/firmware-backlog.ts reads them): `backlog: <run> samples N used U empty E
// queue Q bound B`, U and E littlefs's used bytes (System.info) after and before, Q what the queue counts
// (usedBytes), B its bound.
import config from 'mc/config';
import { File, Iterator, System } from 'file';
import { DEFAULT_MAX_BYTES, DEFAULT_SPILL_EVERY, openFlashQueue } from '../../../platforms/moddable/storage/flash-queue';
import type { FileSystem } from '../../../platforms/moddable/storage/file-module';

const EVERY = 10_000;
const PATH = '/feed-agent.q';
const OLD_JOURNAL_BYTES = 24 * 1024;

/** Role `r`'s reading at `t` ms: uptime in seconds, free heap bytes, RSSI in dBm, degrees to a tenth. */
function reading(r: number, t: number, floats: boolean): number {
  const i = t / EVERY;
  if (floats) return 20 + ((i * 7 + r) % 100) / 7;
  if (r === 0) return Math.floor(t / 1000);
  if (r === 1) return 60_000 - ((i * 37) % 2_000);
  if (r === 2) return -60 - (i % 9);
  return Math.round((27 + ((i % 40) - 20) / 10) * 10) / 10;
}

function said(run: string, samples: number, empty: number, queue: number, bound: number): void {
  trace('backlog: ' + run + ' samples ' + samples + ' used ' + System.info().used + ' empty ' + empty + ' queue ' + queue + ' bound ' + bound + '\n');
}

function empty(): void {
  const names: string[] = [];
  const entries = new Iterator('/');
  for (let e = entries.next(); e !== undefined; e = entries.next()) if (e.length !== undefined) names.push(e.name);
  for (const name of names) File.delete('/' + name);
}

/**
 * Fills the queue to `maxBytes`; then, `turnovers` times over, keeps it at the bound as a long outage
 * that ends in part does: the oldest samples finished a few segments at a time (4,000 to 10,000 samples)
 * and the room written again, tracing littlefs's fewest free bytes meanwhile, what it has left to copy into.
 */
function run(name: string, maxBytes: number, floats: boolean, turnovers = 0): void {
  empty();
  const before = System.info().used;
  let t = 0;
  // The SDK's typings name only strings and buffers for File's write; its sources write a number as a byte.
  const queue = openFlashQueue({ File: File as unknown as FileSystem['File'], Iterator }, { path: PATH, maxBytes, now: () => t });
  queue.load(() => undefined);
  let seq = 0;
  const toBound = (): void => {
    for (let full = false; !full; t += EVERY) {
      for (let r = 0; r < 4 && !full; r++) {
        full = !queue.append(seq, 201 + r, reading(r, t, floats), t);
        if (!full && ++seq % DEFAULT_SPILL_EVERY === 0) queue.commit();
      }
    }
    queue.commit();
  };
  toBound();
  said(name, seq, before, queue.usedBytes(), maxBytes);
  if (turnovers === 0) return;
  const end = seq * (turnovers + 1);
  let least = Infinity;
  for (let finished = -1, k = 0; seq < end; k++) {
    finished += 4_000 + (k % 7) * 1_000;
    queue.ack(finished);
    toBound();
    const { used, total } = System.info();
    least = Math.min(least, total - used);
  }
  trace('backlog: ' + name + ' turned over ' + turnovers + ' times, samples ' + seq + ' least free ' + least + '\n');
}

/** Today's design: a record per sample (kind u8, seq f64, resource u32, value f64) in one file, up to 24 KiB. */
function baseline(): void {
  empty();
  const before = System.info().used;
  const record = new DataView(new ArrayBuffer(21));
  const file = new File(PATH, true);
  file.write(new ArrayBuffer(4));
  let seq = 0;
  for (let t = 0; file.length + 21 <= OLD_JOURNAL_BYTES; t += EVERY) {
    for (let r = 0; r < 4 && file.length + 21 <= OLD_JOURNAL_BYTES; r++, seq++) {
      record.setUint8(0, 1);
      record.setFloat64(1, seq, true);
      record.setUint32(9, 201 + r, true);
      record.setFloat64(13, reading(r, t, false), true);
      file.write(record.buffer);
    }
  }
  const bytes = file.length;
  file.close();
  said('journal', seq, before, bytes, OLD_JOURNAL_BYTES);
}

export default function main(): void {
  trace('backlog: disk ' + System.info().total + '\n');
  const runs = String(config.runs).split(',');
  if (runs.includes('firmware')) run('firmware', DEFAULT_MAX_BYTES, false);
  if (runs.includes('floats')) run('floats', DEFAULT_MAX_BYTES, true);
  if (runs.includes('esp32')) run('esp32', Number(config.esp32BacklogBytes), false, 3);
  if (runs.includes('journal')) baseline();
  empty();
  trace('backlog: done\n');
}
