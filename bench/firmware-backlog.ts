// What the firmware's backlog costs on flash (bench/firmware/backlog): the flash queue on the SDK's
// littlefs (on lin a RAM disk of 4 KB blocks, the ESP32's 1,216 KiB storage partition), filled to its bound
// with the firmware's defaults, its four sensor roles every 10 s, in the core's bursts. The file system's
// own used bytes (System.info) per sample, littlefs's pointers and part-filled blocks included, its two
// superblocks not (they are there with no file); and how many hours of those samples the bound holds.
// Beside it in the same run, today's design: the journal of 21-byte records in one file of 24 KiB.
import { mkdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Simulator, buildApp, findSdk } from '../test/firmware/sdk';
import { round } from './measure';
import type { BenchSection } from './section';

/** Samples an hour at the firmware's defaults: four roles every 10 s. */
const PER_HOUR = 4 * 360;
const LINE = /^backlog: (\w+) samples (\d+) used (\d+) empty (\d+) queue (\d+) bound (\d+)$/;

interface Fill {
  samples: number;
  /** littlefs's used bytes for them. */
  bytes: number;
  /** What the queue counts (usedBytes), and its bound. */
  counted: number;
  bound: number;
}

export async function benchFlash(): Promise<BenchSection> {
  const title = 'The firmware\'s backlog on flash (the flash queue on the SDK\'s littlefs, lin build, each chip\'s bound)';
  const sdk = findSdk(resolve('.'));
  if (typeof sdk === 'string') return { title, rows: [], figures: {}, note: 'skipped: ' + sdk };
  // A fixed directory under node_modules/.cache: mcconfig compiles the SDK's C only once there.
  const out = resolve('node_modules/.cache/feed-agent-flash');
  const manifest = JSON.parse(readFileSync('manifest.json', 'utf8')) as { platforms: { esp32: { config: { backlogBytes: number } } } };
  const esp32Bytes = manifest.platforms.esp32.config.backlogBytes;
  const build = buildApp(sdk, resolve('bench/firmware/backlog'), out, { esp32BacklogBytes: esp32Bytes });
  // A config directory of its own: another mcsim started meanwhile would copy its library over this one's.
  mkdirSync(resolve(out, 'config'), { recursive: true });
  const simulator = new Simulator(sdk, build.library, resolve(out, 'config'));
  const fills: Record<string, Fill> = {};
  try {
    await simulator.waitFor(/^backlog: done$/, 600_000);
    for (const line of simulator.lines) {
      const m = LINE.exec(line);
      if (m === null) continue;
      const [samples, used, empty, counted, bound] = m.slice(2).map(Number);
      fills[m[1]] = { samples, bytes: used - empty, counted, bound };
    }
  } finally {
    await simulator.kill();
  }
  const perSample = (f: Fill): number => round(f.bytes / f.samples, 2);
  const hours = (f: Fill): number => round(f.samples / PER_HOUR, 1);
  const { firmware, floats, esp32, journal } = fills;
  return {
    title,
    note: 'baseline: today\'s design, the journal of 21-byte records in one file bounded at 24 KiB, filled the same way in the same run',
    rows: [
      { label: 'flash per sample in the backlog, littlefs included (4 roles: 3 integers, 1 tenth)', value: perSample(firmware), baseline: perSample(journal), unit: 'B' },
      { label: 'the same, every number a float (11-byte records)', value: perSample(floats), unit: 'B' },
      { label: 'hours of the firmware\'s defaults (4 roles every 10 s) in the default bound, ' + firmware.bound / 1024 + ' KiB', value: hours(firmware), baseline: hours(journal), unit: 'h' },
      { label: 'samples in it; littlefs\'s used bytes and what the queue counted', value: firmware.samples, unit: '; ' + firmware.bytes + ' B and ' + firmware.counted + ' B' },
      { label: 'the same hours on a 4 MB ESP32, its backlogBytes ' + esp32.bound / 1024 + ' KiB (the 1,216 KiB storage partition beside two app slots)', value: hours(esp32), unit: 'h' },
    ],
    figures: {
      'firmware.backlogBytesPerSample': perSample(firmware),
      'firmware.backlogBytesPerFloat': perSample(floats),
      'firmware.backlogHours': hours(firmware),
      'firmware.backlogHoursEsp32': hours(esp32),
      'firmware.journalBytesPerSample': perSample(journal),
      'firmware.journalHours': hours(journal),
    },
  };
}
