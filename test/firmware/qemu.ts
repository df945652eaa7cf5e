// An ESP32 image run in QEMU's esp32 machine (qemu-system-xtensa -machine esp32: the chip's two cores, its
// memories and one 4 MB flash chip, UART, timers and an emulated Ethernet MAC, open_eth; no radio), reading
// its UART line by line. The flash is a file: what the firmware writes there (littlefs) is in it when the
// board starts again. The network is QEMU's user network restricted to this machine (restrict=on: the
// guest reaches nothing but its forwards): each guest address given in `forwards` leads to a port on
// 127.0.0.1, one connection of this machine per connection of the guest (qemu-relay.mjs).
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../support/build';
import { track } from '../support/children';
import { ESP32_FLASH_BYTES, onPath } from './esp32';
import type { Esp32Image, Esp32Tools } from './esp32';
import { LineLog } from './line-log';

// Found from the project's root: the benchmarks run this module bundled elsewhere.
const RELAY = join(ROOT, 'test', 'firmware', 'qemu-relay.mjs');
const QEMU = 'qemu-system-xtensa';

/** QEMU with the esp32 machine, or why the emulator cannot run here. */
export function findQemu(tools: Esp32Tools): string | { skip: string } {
  if (!onPath(tools.env, QEMU)) return { skip: QEMU + ' is not on the PATH of ' + tools.from + ' (QEMU with the esp32 machine)' };
  return QEMU;
}

/**
 * Writes the flash of a board fresh from the factory: 4 MB erased (0xff), with the bootloader, the
 * partition table and the app where the build's flash_args puts them, as `idf.py flash` writes them.
 */
export function writeFlash(image: Esp32Image, path: string): void {
  const flash = Buffer.alloc(ESP32_FLASH_BYTES, 0xff);
  for (const line of readFileSync(join(image.build, 'flash_args'), 'utf8').split('\n')) {
    const m = /^(0x[0-9a-f]+)\s+(\S+)$/i.exec(line.trim());
    if (m === null) continue;
    readFileSync(join(image.build, m[2])).copy(flash, Number(m[1]));
  }
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, flash);
  } finally {
    closeSync(fd);
  }
}

/** Where ESP-IDF's bootloader reads the partition table: 32-byte entries, each starting with the bytes AA 50. */
const PARTITION_TABLE = 0x8000;

/** Where the partition `label` is in `flash`, as the partition table in it places it. */
function partition(flash: Buffer, label: string, path: string): { offset: number; size: number } {
  for (let at = PARTITION_TABLE; flash.readUInt16LE(at) === 0x50aa; at += 32) {
    if (flash.toString('latin1', at + 12, at + 28).replace(/\0+$/, '') !== label) continue;
    return { offset: flash.readUInt32LE(at + 4), size: flash.readUInt32LE(at + 8) };
  }
  throw new Error('no partition ' + label + ' in ' + path);
}

/** The bytes of the partition `label` in the flash file `path`. */
export function readPartition(path: string, label: string): Buffer {
  const flash = readFileSync(path);
  const { offset, size } = partition(flash, label, path);
  return flash.subarray(offset, offset + size);
}

/** Writes `bytes` at the start of the partition `label` of the flash file `path`, as esptool's write_flash does. */
export function writePartition(path: string, label: string, bytes: Uint8Array): void {
  const flash = readFileSync(path);
  const { offset, size } = partition(flash, label, path);
  if (bytes.length > size) throw new Error(bytes.length + ' bytes do not fit the ' + size + ' of partition ' + label);
  flash.set(bytes, offset);
  writeFileSync(path, flash);
}

/** Where the firmware finds a service of this machine: a guest address that `forwards` leads to 127.0.0.1. */
export const GUEST_SERVICE = { address: '10.0.2.100', port: 80 };

export interface QemuOptions {
  /** Guest connections to `address:port` (e.g. 10.0.2.100:80) go to 127.0.0.1:`hostPort`. */
  forwards?: { address: string; port: number; hostPort: number }[];
}

/**
 * Boots the board and waits for `up` (a line the firmware prints once it runs). This QEMU now and then
 * stops at power-on on a loaded machine: its ROM prints nothing, or only "user code done" after the
 * bootloader, whatever the image (a dozen boots in a row succeed, then one stops). Such a boot is cut
 * and the board powered on again, at most `attempts` times, each said on the console.
 */
export async function boot(tools: Esp32Tools, flash: string, options: QemuOptions, up: RegExp, ms = 120_000, attempts = 3): Promise<QemuRun> {
  for (let attempt = 1; ; attempt++) {
    const run = new QemuRun(tools, flash, options);
    try {
      await run.waitFor(up, ms);
      return run;
    } catch (e) {
      await run.stop();
      if (attempt === attempts) throw e;
      console.log('QEMU boot ' + attempt + ' stopped before ' + up + '; powered on again. Its UART:\n' + run.lines.slice(-5).join('\n'));
    }
  }
}

export class QemuRun extends LineLog {
  /** Boots the board whose flash is the file `flash` (writeFlash makes one). */
  constructor(tools: Esp32Tools, flash: string, options: QemuOptions = {}) {
    const forwards = (options.forwards ?? []).map((f) => ',guestfwd=tcp:' + f.address + ':' + f.port + '-cmd:' + process.execPath + ' --no-warnings ' + RELAY + ' ' + f.hostPort);
    const nic = forwards.length === 0 ? ['-nic', 'none'] : ['-nic', 'user,model=open_eth,restrict=on' + forwards.join('')];
    const child = track(spawn(QEMU, ['-nographic', '-machine', 'esp32', '-drive', 'file=' + flash + ',if=mtd,format=raw', ...nic, '-serial', 'stdio', '-monitor', 'none'], {
      env: tools.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    }));
    super(child, 'QEMU', 'latin1');
  }

  /**
   * The UART's last `n` lines, for a failure's message. Where ESP-IDF's panic handler ran, the lines around
   * its reason and backtrace come first: the core dump it prints after them would push them out of the tail.
   */
  override tail(n: number): string {
    const lines = this.trace;
    const panic = lines.findIndex((l) => /Guru Meditation Error|abort\(\) was called|panic'ed/.test(l));
    const reason = panic < 0 ? [] : [...lines.slice(Math.max(0, panic - 5), panic + 10), '…'];
    return [...reason, ...lines.slice(-n)].join('\n');
  }

  /** Stops the board at once (SIGKILL: a power cut, as far as the firmware can tell); the flash file keeps what was written. */
  stop(): Promise<void> {
    return this.end(() => this.child.kill('SIGKILL'));
  }
}
