// An ESP32 image run in QEMU's esp32 machine (qemu-system-xtensa -machine esp32: the chip's two cores, its
// memories and one 4 MB flash chip, UART, timers and an emulated Ethernet MAC, open_eth; no radio), reading
// its UART line by line. The flash is a file: what the firmware writes there (littlefs) is in it when the
// board starts again. The network is QEMU's user network restricted to this machine (restrict=on: the
// guest reaches nothing but its forwards): each guest address given in `forwards` leads to a port on
// 127.0.0.1, one connection of this machine per connection of the guest (qemu-relay.mjs).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../support/build';
import { track } from '../support/children';
import { ESP32_FLASH_BYTES, onPath } from './esp32';
import type { Esp32Image, Esp32Tools } from './esp32';
import { instrumentColumns } from './sdk';

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

/** The bytes of the partition `label` in the flash file `path`, as the partition table in it places it. */
export function readPartition(path: string, label: string): Buffer {
  const flash = readFileSync(path);
  for (let at = PARTITION_TABLE; flash.readUInt16LE(at) === 0x50aa; at += 32) {
    if (flash.toString('latin1', at + 12, at + 28).replace(/\0+$/, '') !== label) continue;
    const offset = flash.readUInt32LE(at + 4);
    return flash.subarray(offset, offset + flash.readUInt32LE(at + 8));
  }
  throw new Error('no partition ' + label + ' in ' + path);
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

export class QemuRun {
  readonly lines: string[] = [];
  /** Date.now() when each line arrived. */
  readonly at: number[] = [];
  private readonly child: ChildProcess;
  private exited = false;
  private waiters: (() => void)[] = [];

  /** Boots the board whose flash is the file `flash` (writeFlash makes one). */
  constructor(tools: Esp32Tools, flash: string, options: QemuOptions = {}) {
    const forwards = (options.forwards ?? []).map((f) => ',guestfwd=tcp:' + f.address + ':' + f.port + '-cmd:' + process.execPath + ' --no-warnings ' + RELAY + ' ' + f.hostPort);
    const nic = forwards.length === 0 ? ['-nic', 'none'] : ['-nic', 'user,model=open_eth,restrict=on' + forwards.join('')];
    this.child = track(spawn(QEMU, ['-nographic', '-machine', 'esp32', '-drive', 'file=' + flash + ',if=mtd,format=raw', ...nic, '-serial', 'stdio', '-monitor', 'none'], {
      env: tools.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    }));
    let partial = '';
    const take = (chunk: Buffer): void => {
      const parts = (partial + chunk.toString('latin1')).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        this.lines.push(line.replace(/\r$/, ''));
        this.at.push(Date.now());
      }
      for (const wake of this.waiters.splice(0)) wake();
    };
    this.child.stdout?.on('data', take);
    this.child.stderr?.on('data', take);
    this.child.on('exit', () => {
      this.exited = true;
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  get alive(): boolean {
    return !this.exited;
  }

  /** The UART without the instrumented build's counters. */
  get trace(): string[] {
    return this.lines.filter((line) => !line.startsWith('instruments'));
  }

  /**
   * The UART's last `n` lines, for a failure's message. Where ESP-IDF's panic handler ran, the lines around
   * its reason and backtrace come first: the core dump it prints after them would push them out of the tail.
   */
  tail(n: number): string {
    const lines = this.trace;
    const panic = lines.findIndex((l) => /Guru Meditation Error|abort\(\) was called|panic'ed/.test(l));
    const reason = panic < 0 ? [] : [...lines.slice(Math.max(0, panic - 5), panic + 10), '…'];
    return [...reason, ...lines.slice(-n)].join('\n');
  }

  /** The index of the first line from `from` on that matches, or rejects after `ms` with the UART's tail. */
  async waitFor(pattern: RegExp, ms: number, from = 0): Promise<number> {
    const end = Date.now() + ms;
    for (;;) {
      for (let i = from; i < this.lines.length; i++) if (pattern.test(this.lines[i])) return i;
      if (this.exited || Date.now() >= end) {
        throw new Error('no line matching ' + pattern + (this.exited ? ' (QEMU exited)' : ' within ' + ms + ' ms') + '; UART:\n' + this.tail(25));
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(500, end - Date.now()));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The columns of the instrumented build's `instruments:` lines (sdk.ts). */
  instruments(): Record<string, number>[] {
    return instrumentColumns(this.lines);
  }

  /** Stops the board at once (SIGKILL: a power cut, as far as the firmware can tell); the flash file keeps what was written. */
  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGKILL');
    await exited;
  }
}
