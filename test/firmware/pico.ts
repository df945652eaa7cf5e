// The Pico W build of this machine, where the Pico SDK is installed (PICO_SDK_DIR set, with the Moddable
// SDK): builds manifest.json for pico/pico_w through `npm run build:moddable` (the README's line, which
// checks the rest of the Pico SDK and says what is missing), and reads what the image costs from its ELF.
// Used by the Pico test (pico.test.ts) and the firmware bench; neither installs the Pico SDK.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { symbolAddress } from './rp2040';
import { buildFailed, findSdk } from './sdk';

/** The RP2040's memories: 2 MB of flash on the Pico W, 264 KB of SRAM. */
export const PICO_FLASH_BYTES = 2 * 1024 * 1024;
export const PICO_RAM_BYTES = 264 * 1024;
/**
 * The Moddable SDK's layout of the Pico's flash: the image from its start; the XS mods and the littlefs
 * partition (MODDEF_FILE_LFS_PARTITION_SIZE, 64 KB unless a manifest says) in what follows it, from one
 * sector past the image's end (xs/platforms/pico/xsHost.c, espFindUnusedFlashStart, modGetPartition) up to
 * the preferences, the last 32 KB (_MODPREF_start = 0x101F8000, build/devices/pico/config/xsproj_rp2040.ld).
 * modGetPartition gives littlefs no partition at all when it does not fit there.
 */
const PREFERENCES_BYTES = 32 * 1024;
const SECTOR_BYTES = 4096;
/** The littlefs partition agreed for the storage backlog (issue 31). */
export const PICO_BACKLOG_BYTES = 768 * 1024;
const FLASH_START = 0x10000000;
const FLASH_END = FLASH_START + PICO_FLASH_BYTES;
const RAM_START = 0x20000000;
const RAM_END = RAM_START + PICO_RAM_BYTES;

export interface PicoSdk {
  /** The Moddable SDK's MODDABLE and PATH (with this project's TypeScript). */
  moddable: string;
  path: string;
  /** Where arm-none-eabi-size and addr2line are (PICO_GCC_ROOT/bin). */
  gccRoot: string;
}

/** The Moddable and Pico SDKs, or why a Pico build cannot be made here. */
export function findPicoSdk(root: string): PicoSdk | string {
  if (!process.env.PICO_SDK_DIR) return 'PICO_SDK_DIR is not set (the Pico SDK is not installed here; docs/pico.md says how)';
  const sdk = findSdk(root);
  if (typeof sdk === 'string') return sdk;
  return { moddable: sdk.moddable, path: sdk.path, gccRoot: process.env.PICO_GCC_ROOT || '/usr/local' };
}

export interface PicoImage {
  uf2: string;
  elf: string;
}

export interface PicoBuild extends PicoImage {
  /** The linker's map (what each object file put where). */
  map: string;
  /** Where mcconfig compiled the modules to .xsb. */
  modules: string;
}

/**
 * Builds `appDir`'s manifest for pico/pico_w into `outDir` without flashing (`-m -t build`), with `flags`
 * (e.g. `-i`: release with instrumentation, whose trace goes to the USB serial) and `config` as key=value.
 */
export function buildPico(sdk: PicoSdk, root: string, appDir: string, outDir: string, flags: string[], config: Record<string, string | number>): PicoBuild {
  mkdirSync(outDir, { recursive: true });
  const args = [...flags, '-m', '-p', 'pico/pico_w', '-t', 'build', '-o', outDir, join(appDir, 'manifest.json'), ...Object.entries(config).map(([k, v]) => k + '=' + v)];
  const run = spawnSync(process.execPath, [join(root, 'scripts', 'build-moddable.mjs'), ...args], {
    cwd: root,
    // Two jobs: the SDK's makefile would start eight.
    env: { ...process.env, MODDABLE: sdk.moddable, PATH: sdk.path, MAKEFLAGS_JOBS: '--jobs 2' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const output = (run.stdout ?? '') + (run.stderr ?? '');
  if (run.status !== 0) throw buildFailed('build:moddable ' + args.join(' '), output);
  const kind = flags.includes('-d') ? 'debug' : flags.includes('-i') ? 'instrument' : 'release';
  const dir = join(outDir, 'bin', 'pico', 'pico_w', kind, basename(appDir));
  const image = { uf2: join(dir, 'xs_pico.uf2'), elf: join(dir, 'xs_pico.elf'), map: join(dir, 'xs_pico.map'), modules: join(outDir, 'tmp', 'pico', 'pico_w', kind, basename(appDir), 'modules') };
  if (!existsSync(image.uf2)) throw new Error('no ' + image.uf2 + ' after the build:\n' + output.split('\n').slice(-10).join('\n'));
  return image;
}

export interface ImageCost {
  /** Bytes written to flash: every section loaded from flash, .data's initial values included. */
  flashBytes: number;
  /** Bytes of SRAM placed by the linker: .data (with the code the Pico SDK runs from RAM), .bss, vectors. */
  ramBytes: number;
  /** arm-none-eabi-size's own columns, for reference. */
  text: number;
  data: number;
  bss: number;
}

/**
 * What the image costs, from its ELF's section headers (arm-none-eabi-objdump -h: size, RAM address,
 * load address). arm-none-eabi-size's Berkeley columns count the Pico SDK's .data as text (it holds the
 * code that runs from RAM, so it is marked as code): its data column is 0 and bss misses .data.
 */
export function imageCost(gccRoot: string, elf: string): ImageCost {
  const tool = (name: string, args: string[]): string => {
    const run = spawnSync(join(gccRoot, 'bin', 'arm-none-eabi-' + name), [...args, elf], { encoding: 'utf8' });
    if (run.status !== 0) throw new Error('arm-none-eabi-' + name + ' ' + elf + ' failed: ' + run.stderr);
    return run.stdout;
  };
  let flashBytes = 0;
  let ramBytes = 0;
  const lines = tool('objdump', ['-h']).split('\n');
  for (let i = 0; i < lines.length; i++) {
    // "  6 .data  00001e3c  200000c0  100e2988  000e40c0  2**4", then its flags on the next line.
    const m = /^\s*\d+\s+(\S+)\s+([0-9a-f]{8})\s+([0-9a-f]{8})\s+([0-9a-f]{8})\s/.exec(lines[i]);
    if (m === null) continue;
    const [size, vma, lma] = [m[2], m[3], m[4]].map((hex) => parseInt(hex, 16));
    const flags = lines[i + 1] ?? '';
    if (lma >= FLASH_START && lma < FLASH_END && flags.includes('LOAD')) flashBytes += size;
    if (vma >= RAM_START && vma < RAM_END) ramBytes += size;
  }
  const [text, data, bss] = tool('size', ['-B']).split('\n')[1].trim().split(/\s+/).map(Number);
  return { flashBytes, ramBytes, text, data, bss };
}

/** Where the SDK's preferences begin (xsproj_rp2040.ld, _MODPREF_start = 0x101F8000): littlefs's partition ends there. */
const PREFERENCES = FLASH_END - PREFERENCES_BYTES;

/**
 * The flash from the end of the image to the preferences, as the SDK reckons it (xs/platforms/pico/xsHost.c):
 * the space after the image starts a sector past its end rounded up to a sector (espFindUnusedFlashStart),
 * and modGetPartition gives littlefs its partition at the end of that space only if it fits (else none).
 */
export function flashAfterImage(gccRoot: string, elf: string): number {
  const end = symbolAddress(gccRoot, elf, '__start_unused_space');
  return PREFERENCES - (Math.ceil(end / SECTOR_BYTES) * SECTOR_BYTES + SECTOR_BYTES);
}

/** littlefs's partition in the Pico W's flash, in bytes: manifest.json's define for pico/pico_w (file.lfs.partition_size). */
export function picoPartition(root: string): number {
  const manifest = JSON.parse(readFileSync(join(root, 'manifest.json'), 'utf8')) as { platforms: Record<string, { defines: { file: { lfs: { partition_size: number } } } }> };
  return manifest.platforms['pico/pico_w'].defines.file.lfs.partition_size;
}

/** The XS heap manifest.json gives pico/pico_w (`creation.static`, in bytes), and its stack in slots. */
export function picoCreation(root: string): { static: number; stack: number } {
  const manifest = JSON.parse(readFileSync(join(root, 'manifest.json'), 'utf8')) as { platforms: Record<string, { creation: { static: number; stack: number } }> };
  return manifest.platforms['pico/pico_w'].creation;
}
