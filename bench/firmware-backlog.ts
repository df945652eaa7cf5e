// What the firmware's backlog costs on flash (bench/firmware/backlog): the flash queue on the SDK's
// littlefs (on lin a RAM disk of 4 KB blocks the size of an ESP32 layout's storage partition), filled to
// its bound with the firmware's defaults, its four sensor roles every 10 s, in the core's bursts. The file
// system's own used bytes (System.info) per sample, littlefs's pointers and part-filled blocks included,
// its two superblocks not (they are there with no file); and how many hours of those samples the bound
// holds: the Pico W's default bound, and each ESP32 layout's backlogBytes in a disk of its own partition's
// size (a build each: the disk's size is a C define). Beside it in the same run, today's design: the
// journal of 21-byte records in one file of 24 KiB.
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { layoutBacklogBytes, storageBytes } from '../test/firmware/flash-layout';
import { Simulator, buildApp, findSdk, type Sdk } from '../test/firmware/sdk';
import { round } from './measure';
import type { BenchSection } from './section';

/** Samples an hour at the firmware's defaults: four roles every 10 s. */
const PER_HOUR = 4 * 360;
const LINE = /^backlog: (\w+) samples (\d+) used (\d+) empty (\d+) queue (\d+) bound (\d+)$/;
const TURNED = /^backlog: (\w+) turned over \d+ times, samples \d+ least free (\d+)$/;
/** littlefs's block. */
const BLOCK = 4096;

interface Fill {
  samples: number;
  /** littlefs's used bytes for them. */
  bytes: number;
  /** What the queue counts (usedBytes), and its bound. */
  counted: number;
  bound: number;
  /** littlefs's fewest free blocks while the bound was turned over (runs that do). */
  leastFree?: number;
}

type Flash = '4mb' | '8mb';

export async function benchFlash(): Promise<BenchSection> {
  const title = 'The firmware\'s backlog on flash (the flash queue on the SDK\'s littlefs, lin build, each chip\'s bound)';
  const sdk = findSdk(resolve('.'));
  if (typeof sdk === 'string') return { title, rows: [], figures: {}, note: 'skipped: ' + sdk };
  const storage4 = storageBytes('4mb');
  const storage8 = storageBytes('8mb');
  // Each layout's bound as its build gets it (platforms/moddable/esp32/flash-<layout>.json).
  const fills = await fill(sdk, '4mb', 'firmware,floats,esp32,journal', layoutBacklogBytes('4mb'));
  const { esp32: esp32_8mb } = await fill(sdk, '8mb', 'esp32', layoutBacklogBytes('8mb'));
  const perSample = (f: Fill): number => round(f.bytes / f.samples, 2);
  const hours = (f: Fill): number => round(f.samples / PER_HOUR, 1);
  const { firmware, floats, esp32, journal } = fills;
  const kib = (bytes: number): string => (bytes / 1024).toLocaleString('en-US') + ' KiB';
  return {
    title,
    note: 'baseline: today\'s design, the journal of 21-byte records in one file bounded at 24 KiB, filled the same way in the same run',
    rows: [
      { label: 'flash per sample in the backlog, littlefs included (4 roles: 3 integers, 1 tenth)', value: perSample(firmware), baseline: perSample(journal), unit: 'B' },
      { label: 'the same, every number a float (11-byte records)', value: perSample(floats), unit: 'B' },
      { label: 'hours of the firmware\'s defaults (4 roles every 10 s) in the default bound, ' + kib(firmware.bound), value: hours(firmware), baseline: hours(journal), unit: 'h' },
      { label: 'samples in it; littlefs\'s used bytes and what the queue counted', value: firmware.samples, unit: '; ' + firmware.bytes + ' B and ' + firmware.counted + ' B' },
      { label: 'the same hours on a 4 MB ESP32, its backlogBytes ' + kib(esp32.bound) + ' (the ' + kib(storage4) + ' storage partition beside two app slots)', value: hours(esp32), unit: 'h' },
      { label: 'the same on an 8 MB ESP32, its backlogBytes ' + kib(esp32_8mb.bound) + ' in its ' + kib(storage8) + ' partition; ' + esp32_8mb.samples + ' samples, ' + perSample(esp32_8mb) + ' B each', value: hours(esp32_8mb), unit: 'h' },
      { label: 'littlefs\'s fewest free blocks, each ESP32 bound turned over three times: 4 MB, and 8 MB', value: esp32.leastFree as number, unit: 'and ' + esp32_8mb.leastFree },
    ],
    figures: {
      'firmware.backlogBytesPerSample': perSample(firmware),
      'firmware.backlogBytesPerFloat': perSample(floats),
      'firmware.backlogHours': hours(firmware),
      'firmware.backlogHoursEsp32': hours(esp32),
      'firmware.backlogHoursEsp32_8mb': hours(esp32_8mb),
      'firmware.backlogLeastFreeBlocksEsp32': esp32.leastFree as number,
      'firmware.backlogLeastFreeBlocksEsp32_8mb': esp32_8mb.leastFree as number,
      'firmware.journalBytesPerSample': perSample(journal),
      'firmware.journalHours': hours(journal),
    },
  };
}

/** The bench's app built for one ESP32 layout, its disk that layout's storage partition, running `runs`: each run's fill. */
async function fill(sdk: Sdk, flash: Flash, runs: string, esp32BacklogBytes: number): Promise<Record<string, Fill>> {
  // A fixed directory under node_modules/.cache: mcconfig compiles the SDK's C only once there.
  const out = resolve('node_modules/.cache/feed-agent-flash-' + flash);
  const build = buildApp(sdk, resolve('bench/firmware/backlog'), out, { runs, esp32BacklogBytes }, true, { FEED_AGENT_FLASH: flash });
  // A config directory of its own: another mcsim started meanwhile would copy its library over this one's.
  mkdirSync(resolve(out, 'config'), { recursive: true });
  const simulator = new Simulator(sdk, build.library, resolve(out, 'config'));
  const fills: Record<string, Fill> = {};
  try {
    // A disk of another size than the partition would measure another flash (a fill past it throws).
    const disk = Number(simulator.lines[await simulator.waitFor(/^backlog: disk \d+$/, 60_000)].slice('backlog: disk '.length));
    if (disk !== storageBytes(flash)) throw new Error('flash: the ' + flash + ' build\'s littlefs has ' + disk + ' bytes, its storage partition ' + storageBytes(flash) + ' (bench/firmware/backlog/disk-' + flash + '.json)');
    // An exception aborts the app but leaves mcsim running.
    const last = simulator.lines[await simulator.waitFor(/^backlog: done$|^XS abort/, 600_000)];
    if (last !== 'backlog: done') throw new Error('flash: the ' + flash + ' build\'s fills stopped:\n' + simulator.tail(8));
    for (const line of simulator.lines) {
      const m = LINE.exec(line);
      if (m === null) continue;
      const [samples, used, empty, counted, bound] = m.slice(2).map(Number);
      fills[m[1]] = { samples, bytes: used - empty, counted, bound };
    }
    for (const line of simulator.lines) {
      const m = TURNED.exec(line);
      if (m !== null) fills[m[1]].leastFree = Number(m[2]) / BLOCK;
    }
  } finally {
    await simulator.kill();
  }
  return fills;
}
