// What the peripherals of a description cost, by role, so that a user sees what a contact, a probe or an
// SHT3x adds (docs/peripherals.md). Flash: the bytecode of each role's modules (.xsb, as mcconfig compiled
// them) and the code and constants of its C, from the linker's map (what --gc-sections kept). Static RAM:
// its C's .data and .bss. XS heap: bench/firmware-peripherals opens one entry of each kind and reads the
// slots and chunk bytes it holds after a garbage collection; on the Pico W in rp2040js, with an SHT3x
// played on its I2C bus, and on lin with stand-in pins in files.
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { buildPico } from '../test/firmware/pico';
import type { PicoSdk } from '../test/firmware/pico';
import { Rp2040Run } from '../test/firmware/rp2040';
import { Simulator, buildApp } from '../test/firmware/sdk';
import type { Sdk } from '../test/firmware/sdk';
import { SHT3X_MEASURE, SHT3X_STATUS, Sht3xPart, sht3xMeasurement, sht3xStatus } from '../test/firmware/sht3x';

const APP = resolve('bench/firmware-peripherals');

/** Each role's XS modules (paths under the build's modules folder, without .xsb) and C objects. */
const ROLES: { key: string; label: string; modules: string[]; objects: string[] }[] = [
  {
    key: 'description',
    label: 'the description and the peripherals (platforms/moddable/peripherals, firmware/board, modules)',
    modules: ['feed-agent/platforms/moddable/peripherals/', 'feed-agent/platforms/moddable/firmware/board', 'modules'],
    objects: ['modules.c.o'],
  },
  { key: 'digital', label: 'digital input, relay (embedded:io/digital)', modules: ['~.embedded/io/digital', '~.embedded/io/digitalbank'], objects: ['digitalbank.c.o'] },
  { key: 'analog', label: 'analog input (embedded:io/analog, rp2040/adc-input)', modules: ['~.embedded/io/analog', 'feed-agent/platforms/moddable/rp2040/adc-input'], objects: ['_analog.c.o', 'adc-input.c.o'] },
  { key: 'pulses', label: 'pulse counter (rp2040/edge-counter)', modules: ['feed-agent/platforms/moddable/rp2040/edge-counter'], objects: ['edge-counter.c.o'] },
  { key: 'pwm', label: 'PWM (embedded:io/pwm)', modules: ['~.embedded/io/pwm'], objects: ['_pwm.c.o'] },
  { key: 'i2c', label: 'I2C bus (embedded:io/i2c, embedded:io/smbus)', modules: ['~.embedded/io/i2c', '~.embedded/io/smbus'], objects: ['_i2c.c.o'] },
  { key: 'sht3x', label: 'driver sht3x, with crc', modules: ['~.embedded/sensor/Humidity-Temperature/SHT3x', 'crc'], objects: ['crc.c.o'] },
  { key: 'tmp117', label: 'driver tmp117', modules: ['~.embedded/sensor/Temperature/TMP117'], objects: [] },
];

export interface RoleCost {
  key: string;
  label: string;
  /** Bytecode of its modules. */
  bytecode: number;
  /** Its C's code and constants, and .data's initial values. */
  nativeFlash: number;
  /** Its C's .data and .bss. */
  nativeRam: number;
}

/** Flash and static RAM by object file, from a GNU ld map (after "Linker script and memory map"). */
function objectSizes(map: string): Map<string, { flash: number; ram: number }> {
  const sizes = new Map<string, { flash: number; ram: number }>();
  const lines = map.slice(map.indexOf('Linker script and memory map')).split('\n');
  let output = '';
  for (const line of lines) {
    const section = /^(\.\S+)/.exec(line);
    if (section !== null) output = section[1];
    // " .text.x  0x10043864  0xa0 /path/file.c.o", or the address and size on the line after the name.
    const m = /^\s+(?:\S+\s+)?0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+\.o)$/.exec(line);
    if (m === null) continue;
    const [address, size, file] = [parseInt(m[1], 16), parseInt(m[2], 16), basename(m[3])];
    if (address === 0 || size === 0) continue;
    const entry = sizes.get(file) ?? { flash: 0, ram: 0 };
    const inRam = address >= 0x20000000;
    // .data lives in RAM and its initial values in flash.
    if (!inRam || output === '.data') entry.flash += size;
    if (inRam) entry.ram += size;
    sizes.set(file, entry);
  }
  return sizes;
}

/** What each role costs in a build whose modules folder and linker map are given. */
export function roleCosts(modulesDir: string, mapFile: string): RoleCost[] {
  const sizes = objectSizes(readFileSync(mapFile, 'utf8'));
  const xsb = (module: string): number => {
    if (!module.endsWith('/')) return statSync(join(modulesDir, module + '.xsb'), { throwIfNoEntry: false })?.size ?? 0;
    const dir = join(modulesDir, module);
    return statSync(dir, { throwIfNoEntry: false }) === undefined ? 0 : readdirSizes(dir);
  };
  return ROLES.map((r) => ({
    key: r.key,
    label: r.label,
    bytecode: r.modules.reduce((sum, m) => sum + xsb(m), 0),
    nativeFlash: r.objects.reduce((sum, o) => sum + (sizes.get(o)?.flash ?? 0), 0),
    nativeRam: r.objects.reduce((sum, o) => sum + (sizes.get(o)?.ram ?? 0), 0),
  }));
}

function readdirSizes(dir: string): number {
  let sum = 0;
  for (const name of readdirSync(dir)) if (name.endsWith('.xsb')) sum += statSync(join(dir, name)).size;
  return sum;
}

/** bench/firmware-peripherals' lines: what each entry holds. */
const MEASURE = /^measure: (\S+) slots (-?\d+) chunks (-?\d+)$/;

export interface EntryHeap {
  name: string;
  slots: number;
  chunkBytes: number;
}

/** Instrumentation counts the slot heap in bytes: 16 a slot on the chips, 32 on lin. */
function readEntries(lines: string[], slotBytes: number): EntryHeap[] {
  return lines.flatMap((line) => {
    const m = MEASURE.exec(line);
    return m === null ? [] : [{ name: m[1], slots: Number(m[2]) / slotBytes, chunkBytes: Number(m[3]) }];
  });
}

function checkRun(lines: string[]): void {
  const problems = lines.filter((l) => l.startsWith('measure: problems ') || l.startsWith('measure: said '));
  if (problems.length > 0) throw new Error('bench/firmware-peripherals: ' + problems.join('; '));
}

/** bench/firmware-peripherals on the emulated Pico W, the SHT3x played on I2C0 (its GP4/GP5). */
export async function entriesOnPico(sdk: PicoSdk, root: string, out: string, bootrom: string): Promise<EntryHeap[]> {
  const image = buildPico(sdk, root, APP, out, ['-i'], { url: 'http://127.0.0.1:8080', publicKey: 'B3AC4F1E0D2C5A6B7E8F9012', token: 'bench-peripherals-token' });
  const run = new Rp2040Run(bootrom, image.uf2, undefined, {
    setup: (chip) => {
      chip.gpio[15].setInputValue(true);
      new Sht3xPart(chip.i2c[0]);
    },
  });
  try {
    await run.waitFor(/^measure: done$/, 600_000);
    checkRun(run.lines);
    return readEntries(run.lines, 16);
  } finally {
    run.stop();
  }
}

/** bench/firmware-peripherals on lin in the ESP32's budget, its pins stand-ins in files and an SHT3x played there. */
export async function entriesOnLin(sdk: Sdk, out: string): Promise<EntryHeap[]> {
  const pins = join(out, 'bench-pins');
  mkdirSync(pins, { recursive: true });
  const hex = (bytes: number[]): string => bytes.map((b) => b.toString(16).padStart(2, '0')).join('');
  writeFileSync(join(pins, 'i2c-4-5-44'), JSON.stringify({ [SHT3X_MEASURE.toString(16)]: hex(sht3xMeasurement(21.5, 55)), [SHT3X_STATUS.toString(16)]: hex(sht3xStatus()) }));
  const build = buildApp(sdk, APP, out, { url: 'http://127.0.0.1:8080', publicKey: 'B3AC4F1E0D2C5A6B7E8F9012', token: 'bench-peripherals-token', pins });
  const simulator = new Simulator(sdk, build.library);
  try {
    await simulator.waitFor(/^measure: done$/, 120_000);
    checkRun(simulator.lines);
    return readEntries(simulator.lines, 32);
  } finally {
    await simulator.kill();
  }
}
