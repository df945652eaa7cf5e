// The ESP32 build of this machine, where there is one: ESP-IDF's environment, either already in this
// process's (IDF_PATH set: ESP-IDF's export.sh, or the env.sh of a toolchain built from source, sourced)
// or read from ESP_ROOT/env.sh (the folder such a build filled), with the Moddable SDK that environment
// names. Builds manifest.json for esp32 through `npm run build:moddable` (the README's line) and reads
// what the image costs from its ELF. Used by the ESP32 test (esp32.test.ts) and the bench; neither
// installs ESP-IDF.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { partitionBytes } from './flash-layout';
import { buildFailed } from './sdk';

/** The ESP32's memories: 4 MB of flash on the usual modules (and in QEMU's esp32 machine), 520 KB of SRAM. */
export const ESP32_FLASH_BYTES = 4 * 1024 * 1024;
export const ESP32_SRAM_BYTES = 520 * 1024;
/** Where the linker puts data (DRAM) and code that runs from RAM (IRAM): ESP32 technical reference, "Address Space". */
const DRAM = [0x3ffae000, 0x40000000];
const IRAM = [0x40070000, 0x400c0000];

export interface Esp32Tools {
  /** The environment of every build and emulator run: the toolchain's, with this project's TypeScript on PATH. */
  env: Record<string, string>;
  /** Where it came from, for messages. */
  from: string;
}

/** The toolchain, or why an ESP32 build cannot be made here. */
export function findEsp32(root: string): Esp32Tools | string {
  let env: Record<string, string>;
  let from: string;
  if (process.env.IDF_PATH) {
    env = { ...process.env } as Record<string, string>;
    from = 'IDF_PATH ' + process.env.IDF_PATH;
  } else if (process.env.ESP_ROOT) {
    const file = join(process.env.ESP_ROOT, 'env.sh');
    if (!existsSync(file)) return 'ESP_ROOT is ' + process.env.ESP_ROOT + ', which holds no env.sh (the file a toolchain built from source writes last)';
    const read = spawnSync('bash', ['-c', '. "$1" >/dev/null && env -0', 'env', file], { encoding: 'utf8' });
    if (read.status !== 0) return '. ' + file + ' failed: ' + read.stderr.trim();
    env = Object.fromEntries(read.stdout.split('\0').filter((pair) => pair.includes('=')).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
    from = file;
  } else {
    return 'neither IDF_PATH (ESP-IDF\'s environment) nor ESP_ROOT (a folder with the env.sh of an ESP32 toolchain) is set';
  }
  if (!env.IDF_PATH || !existsSync(join(env.IDF_PATH, 'tools', 'idf.py'))) return from + ': IDF_PATH names no ESP-IDF (no tools/idf.py)';
  if (!env.MODDABLE || !existsSync(join(env.MODDABLE, 'build', 'bin', 'lin', 'release', 'mcconfig'))) return from + ': MODDABLE names no Moddable SDK with its tools built';
  if (!onPath(env, 'xtensa-esp32-elf-gcc')) return from + ': xtensa-esp32-elf-gcc is not on its PATH';
  env.PATH = [join(root, 'node_modules', '.bin'), env.PATH].join(':');
  return { env, from };
}

/** Whether `tool` is an executable on `env`'s PATH. */
export function onPath(env: Record<string, string>, tool: string): boolean {
  return spawnSync('bash', ['-c', 'command -v "$1"', 'which', tool], { env, stdio: 'ignore' }).status === 0;
}

export interface Esp32Image {
  /** The ESP-IDF build folder: flash_args, the bootloader, the partition table and the app. */
  build: string;
  elf: string;
  /** The app's image as it is written to flash (its factory partition). */
  app: string;
}

/**
 * Builds `appDir`'s manifest for esp32 into `outDir` without flashing (`-m -t build`), with `flags` (`-i`:
 * release with instrumentation, whose trace goes to the UART; a `-d` build's goes to xsbug) and `config`
 * as key=value; `net` is FEED_AGENT_NET (manifest.json): 'openeth' for QEMU's esp32 machine, 'wifi' for a board.
 */
export function buildEsp32(tools: Esp32Tools, root: string, appDir: string, outDir: string, flags: string[], config: Record<string, string | number>, net: 'openeth' | 'wifi'): Esp32Image {
  mkdirSync(outDir, { recursive: true });
  const args = [...flags, '-m', '-p', 'esp32', '-t', 'build', '-o', outDir, join(appDir, 'manifest.json'), ...Object.entries(config).map(([k, v]) => k + '=' + v)];
  // nice: ESP-IDF's ninja takes every core, on a machine shared with other builds.
  const run = spawnSync('nice', [process.execPath, join(root, 'scripts', 'build-moddable.mjs'), ...args], {
    cwd: root,
    env: { ...tools.env, FEED_AGENT_NET: net },
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  const output = (run.stdout ?? '') + (run.stderr ?? '');
  if (run.status !== 0) throw buildFailed('FEED_AGENT_NET=' + net + ' build:moddable ' + args.join(' '), output);
  const kind = flags.includes('-d') ? 'debug' : flags.includes('-i') ? 'instrument' : 'release';
  const build = join(outDir, 'tmp', 'esp32', kind, basename(appDir), 'xsProj-esp32', 'build');
  const image = { build, elf: join(build, 'xs_esp32.elf'), app: join(build, 'xs_esp32.bin') };
  if (!existsSync(image.app) || !existsSync(join(build, 'flash_args'))) throw new Error('no ' + image.app + ' or flash_args after the build:\n' + output.split('\n').slice(-10).join('\n'));
  return image;
}

export interface Esp32Cost {
  /** Bytes of the app's image, written to its partition: code and constants run from flash, and the initial values of RAM. */
  flashBytes: number;
  /** Bytes of SRAM placed by the linker: DRAM (.data, .bss and the like) and IRAM (code that runs from RAM). */
  ramBytes: number;
  dramBytes: number;
  iramBytes: number;
  /** The factory partition the app goes into, from the build's partition table. */
  partitionBytes: number;
}

/** What the image costs: the app's size, and its sections' sizes by address (xtensa-esp32-elf-objdump -h). */
export function esp32ImageCost(tools: Esp32Tools, image: Esp32Image): Esp32Cost {
  const run = spawnSync('xtensa-esp32-elf-objdump', ['-h', image.elf], { env: tools.env, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  if (run.status !== 0) throw new Error('xtensa-esp32-elf-objdump -h ' + image.elf + ' failed: ' + run.stderr);
  let dramBytes = 0;
  let iramBytes = 0;
  const lines = run.stdout.split('\n');
  for (let i = 0; i < lines.length; i++) {
    // " 3 .dram0.data  00003a1c  3ffb0000  3ffb0000  00007b20  2**4", then its flags on the next line.
    const m = /^\s*\d+\s+(\S+)\s+([0-9a-f]{8})\s+([0-9a-f]{8})\s/.exec(lines[i]);
    if (m === null || !(lines[i + 1] ?? '').includes('ALLOC')) continue;
    const [size, vma] = [parseInt(m[2], 16), parseInt(m[3], 16)];
    if (vma >= DRAM[0] && vma < DRAM[1]) dramBytes += size;
    else if (vma >= IRAM[0] && vma < IRAM[1]) iramBytes += size;
  }
  return { flashBytes: statSync(image.app).size, ramBytes: dramBytes + iramBytes, dramBytes, iramBytes, partitionBytes: factoryPartition(image) };
}

/** The size of the factory app partition in the build's partitions.csv (mcconfig takes the storage partition from it). */
function factoryPartition(image: Esp32Image): number {
  return partitionBytes(join(image.build, '..', 'partitions.csv'), (f) => f[1] === 'app');
}

/** The XS heap manifest.json gives esp32 (`creation.static`, in bytes), and its stack in slots. */
export function esp32Creation(root: string): { static: number; stack: number } {
  const manifest = JSON.parse(readFileSync(join(root, 'manifest.json'), 'utf8')) as { platforms: Record<string, { creation: { static: number; stack: number } }> };
  return manifest.platforms.esp32.creation;
}
