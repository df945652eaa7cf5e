// A Pico image run instruction by instruction in rp2040js (an emulator of the RP2040: core, timers, UART,
// USB, PIO and ADC; not the Pico W's CYW43 radio), reading what it writes to its USB serial (CDC) and UART.
// rp2040js needs the chip's boot ROM, which neither it nor this project ships: a local prerequisite, as
// the Pico SDK is, named by RP2040_BOOTROM (a file of 16 KB: the ROM as little-endian words, e.g. revision
// B1 from wokwi/rp2040js demo/bootrom.ts, built from raspberrypi/pico-bootrom).
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BasePeripheral, Simulator, USBCDC } from 'rp2040js';
import type { Logger, RP2040 } from 'rp2040js';
import { uf2Blocks } from '../support/uf2-blocks';

const FLASH_BASE = 0x10000000;

/** The boot ROM's path, or why the emulator cannot run here. */
export function findBootrom(): string | { skip: string } {
  const path = process.env.RP2040_BOOTROM;
  if (!path) return { skip: 'RP2040_BOOTROM is not set (the RP2040 boot ROM that rp2040js needs, 16 KB, e.g. from wokwi/rp2040js demo/bootrom.ts)' };
  if (!existsSync(path) || statSync(path).size !== 16384) return { skip: 'RP2040_BOOTROM: ' + path + ' is not a 16 KB ROM image' };
  return path;
}

/** Writes a UF2 file's blocks into `flash` (at their address minus 0x10000000) as the boot ROM would. */
function loadUf2(path: string, flash: Uint8Array): void {
  const { blocks, ignored } = uf2Blocks(readFileSync(path));
  // A block the ROM would ignore means a file that does not do on a board what it does here.
  if (ignored > 0) throw new Error(path + ': ' + ignored + ' blocks the RP2040 boot ROM would ignore');
  for (const block of blocks) flash.set(block.data, block.address - FLASH_BASE);
}

/**
 * Makes the boot ROM's flash_range_erase and flash_range_program act on the emulated flash: rp2040js
 * models reading flash (XIP) but not the SSI commands that erase and program it, so without this every
 * write to flash (littlefs, the SDK's preferences) is lost and a mount finds it corrupt. The two ROM
 * functions are looked up in the ROM's function table (codes 'RE' and 'RP', RP2040 datasheet, "Bootrom
 * Functions") and done in JavaScript when the core calls them; the ROM's other flash functions run as they are.
 */
function emulateFlashWrites(simulator: Simulator): void {
  const mcu = simulator.rp2040;
  const table = mcu.readUint16(0x14);
  let erase = 0;
  let program = 0;
  for (let at = table; mcu.readUint16(at) !== 0; at += 4) {
    const code = String.fromCharCode(mcu.readUint8(at), mcu.readUint8(at + 1));
    // Thumb addresses: bit 0 set, which the program counter never holds.
    if (code === 'RE') erase = mcu.readUint16(at + 2) & ~1;
    if (code === 'RP') program = mcu.readUint16(at + 2) & ~1;
  }
  if (erase === 0 || program === 0) throw new Error('no flash_range_erase or flash_range_program in this boot ROM');
  const core = mcu.core;
  const execute = core.executeInstruction.bind(core);
  core.executeInstruction = (): number => {
    const pc = core.PC;
    if (pc === erase) mcu.flash.fill(0xff, core.registers[0], core.registers[0] + core.registers[1]);
    else if (pc === program) {
      const [offset, data, count] = [core.registers[0], core.registers[1], core.registers[2]];
      for (let i = 0; i < count; i++) mcu.flash[offset + i] &= mcu.readUint8(data + i);
    } else return execute();
    core.PC = core.LR & ~1;
    return 1;
  };
}

/** Where the ROSC (ring oscillator) lives, as rp2040js keys its peripherals, and its RANDOMBIT register. */
const ROSC_BASE = 0x40060;
const ROSC_RANDOMBIT = 0x1c;

/**
 * The ring oscillator as rp2040js lacks it: its RANDOMBIT register gives a random bit, as the real one
 * gives the oscillator's jitter (RP2040 datasheet, 2.17.5). rp2040js leaves the ROSC unimplemented,
 * every register reading 0xffffffff (enabled, and a random bit stuck at 1): the chip would draw the same
 * "random" numbers at every boot, being deterministic. Every other register reads as it did.
 */
class RandomRosc extends BasePeripheral {
  constructor(rp2040: RP2040) {
    super(rp2040, 'ROSC_BASE');
  }

  override readUint32(offset: number): number {
    return offset === ROSC_RANDOMBIT ? randomInt(2) : 0xffffffff;
  }

  override writeUint32(): void {}
}

/**
 * rp2040js 1.4.1 (and its repository's head) tests a PWM B pin's direction with `&&` where it means `&`
 * (`if (this.gpioDirection && 1 << index) return;` in RPPWM.gpioOnInput): any pin of any slice set as an
 * output (after reset, all of them) makes it ignore every input edge, so a slice never counts edges on its B
 * pin as the chip does (RP2040 datasheet, 4.5.2.4, DIVMODE "rising/falling edge of B"). The test's chip has
 * the check the datasheet describes: an edge on a B pin that is an input clocks its slice.
 */
function countPwmEdges(mcu: RP2040): void {
  const pwm = mcu.pwm;
  pwm.gpioOnInput = (index: number): void => {
    if ((pwm.gpioDirection & (1 << index)) !== 0) return;
    for (const channel of pwm.channels) if (channel.pinB1 === index || channel.pinB2 === index) channel.gpioBChanged();
  };
}

/** The address of `symbol`'s code in the ELF (arm-none-eabi-nm; a Thumb function's bit 0 cleared). */
export function symbolAddress(gccRoot: string, elf: string, symbol: string): number {
  const run = spawnSync(join(gccRoot, 'bin', 'arm-none-eabi-nm'), [elf], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const line = run.stdout.split('\n').find((l) => l.endsWith(' ' + symbol));
  if (line === undefined) throw new Error(symbol + ' is not in ' + elf);
  return parseInt(line.split(' ')[0], 16) & ~1;
}

/** The emulator's complaints, kept rather than printed (it logs every SEV and USB transfer at info level). */
class QuietLogger implements Logger {
  readonly problems: string[] = [];
  debug(): void {}
  info(): void {}
  warn(component: string, message: string): void {
    this.keep(component + ': ' + message);
  }
  error(component: string, message: string): void {
    this.keep(component + ': ' + message);
  }
  private keep(problem: string): void {
    this.problems.push(problem);
    if (this.problems.length > 20) this.problems.shift();
  }
}

/** One run of a UF2 image in rp2040js: its output line by line, on the chip's simulated clock. */
export class Rp2040Run {
  readonly lines: string[] = [];
  /** When each line ended, in milliseconds of the chip's simulated time since it started. */
  readonly chipMs: number[] = [];
  private readonly simulator = new Simulator();
  private readonly logger = new QuietLogger();
  private partial = '';

  /** The chip's time (ms) of every call of the watched function, when one was given. */
  readonly calls: number[] = [];

  /**
   * `uf2`: the image's UF2 file, or the files copied onto the board one after the other (the image's, then
   * a provisioning file). `flash`: what an earlier run left in flash (littlefs included), for a chip that
   * restarts after a power cut. `options.entropy`: the ring oscillator gives random bits (RandomRosc).
   * `options.watch`: the address of a function whose calls `calls` records. `options.stdout`: the address
   * of the Pico SDK's stdio_usb_out_chars: `lines` are then all the firmware writes to its USB serial, as a
   * host listening from power-on would read them (without it, what the emulated host reads once it has
   * opened the port: the driver drops what comes before, the first milliseconds after a boot included).
   * `options.setup`: what the test wires to the chip's pins and buses before it starts (a part on the I2C
   * bus, a level on an input).
   */
  constructor(bootrom: string, uf2: string | readonly string[], flash?: Uint8Array, options: { entropy?: boolean; watch?: number; stdout?: number; setup?: (chip: RP2040) => void } = {}) {
    const mcu = this.simulator.rp2040;
    mcu.logger = this.logger;
    if (options.entropy) mcu.peripherals[ROSC_BASE] = new RandomRosc(mcu);
    const rom = readFileSync(bootrom);
    mcu.loadBootrom(new Uint32Array(rom.buffer, rom.byteOffset, rom.length / 4));
    if (flash !== undefined) mcu.flash.set(flash);
    for (const file of typeof uf2 === 'string' ? [uf2] : uf2) loadUf2(file, mcu.flash);
    // Once the image enumerates, the emulator's host raises DTR, as a terminal opening the port does: the
    // Pico SDK's USB serial writes nothing before that (stdio_usb and the SDK's ESP_putc check tud_cdc_connected).
    const cdc = new USBCDC(mcu.usbCtrl);
    if (options.stdout === undefined) cdc.onSerialData = (bytes) => this.take(Buffer.from(bytes).toString('latin1'));
    mcu.uart[0].onByte = (byte) => this.take(String.fromCharCode(byte));
    emulateFlashWrites(this.simulator);
    countPwmEdges(mcu);
    if (options.watch !== undefined || options.stdout !== undefined) this.watch(options.watch, options.stdout);
    options.setup?.(mcu);
    mcu.core.PC = FLASH_BASE;
    this.simulator.execute();
  }

  private watch(address: number | undefined, stdout: number | undefined): void {
    const mcu = this.simulator.rp2040;
    const core = mcu.core;
    const execute = core.executeInstruction.bind(core);
    core.executeInstruction = (): number => {
      if (core.PC === address) this.calls.push(this.simulator.clock.nanos / 1e6);
      else if (core.PC === stdout) {
        // stdio_usb_out_chars(buf, length), before it checks for a host.
        let text = '';
        for (let i = 0; i < core.registers[1]; i++) text += String.fromCharCode(mcu.readUint8(core.registers[0] + i));
        this.take(text);
      }
      return execute();
    };
  }

  /** The emulated chip, whose pins and buses a test drives (rp2040js: gpio, adc, i2c, uart, pwm). */
  get chip(): RP2040 {
    return this.simulator.rp2040;
  }

  /** The chip's time, ms since it started. */
  get chipNow(): number {
    return this.simulator.clock.nanos / 1e6;
  }

  /** Sends `text` to the chip on UART `port`, a byte at a time as its receive FIFO takes them. */
  sendUart(port: 0 | 1, text: string): void {
    for (const byte of Buffer.from(text, 'latin1')) this.simulator.rp2040.uart[port].feedByte(byte);
  }

  /** The 12-bit reading the emulated ADC gives on input `channel` (4: the temperature sensor). */
  setAdc(channel: number, value: number): void {
    this.simulator.rp2040.adc.channelValues[channel] = value;
  }

  private take(text: string): void {
    const parts = (this.partial + text).replace(/\r/g, '').split('\n');
    this.partial = parts.pop() ?? '';
    for (const line of parts) {
      // Bytes as latin1 until a line is whole: then its UTF-8.
      this.lines.push(Buffer.from(line, 'latin1').toString('utf8'));
      this.chipMs.push(this.simulator.clock.nanos / 1e6);
    }
  }

  /**
   * The index of the first line from `from` on matching `pattern`; rejects with the output once `wallMs`
   * of real time passed without one.
   */
  async waitFor(pattern: RegExp, wallMs: number, from = 0): Promise<number> {
    const end = Date.now() + wallMs;
    for (;;) {
      const index = this.lines.findIndex((l, i) => i >= from && pattern.test(l));
      if (index >= 0) return index;
      if (Date.now() >= end) {
        throw new Error('no line matching ' + pattern + ' within ' + wallMs + ' ms of real time; output:\n' + this.lines.slice(-20).join('\n') + '\nemulator warnings:\n' + this.logger.problems.slice(-5).join('\n'));
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** Stops the chip, as a power cut does, and answers what its flash holds. */
  stop(): Uint8Array {
    this.simulator.stop();
    return this.simulator.rp2040.flash.slice();
  }
}
