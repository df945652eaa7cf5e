// firmware/board for the simulator (manifest.json maps it): the SDK has no pins on lin, so with
// pins=<folder> on the build line each pin is a file there that a person or a test writes and reads.
// `gpio<N>` holds a level (0 or 1) for a digital input or output, a raw reading for an analog input
// (12 bits), the count of pulses so far for a pulse counter, and the duty for PWM (10 bits).
// `i2c-<data>-<clock>-<address, 2 hex digits>` plays an I2C part: a JSON object from the bytes written, in
// hex, to the bytes it answers next; no such file is a part that does not answer. Without pins=, no pins.
import config from 'mc/config';
import { File } from 'file';
import type { AnalogPin, Board, Closable, Pull, PwmPin, Readable, Writable } from '../peripherals/board';

const folder = typeof config.pins === 'string' && config.pins !== '' ? config.pins + '/' : '';

function readText(path: string): string | null {
  if (!File.exists(path)) return null;
  const file = new File(path);
  try {
    return file.read(String);
  } finally {
    file.close();
  }
}

function writeText(path: string, text: string): void {
  if (File.exists(path)) File.delete(path);
  const file = new File(path, true);
  file.write(text);
  file.close();
}

const closed = (): void => undefined;

/** A pin's number as its file holds it; `missing` when there is no file (an input nothing drives). */
function level(pin: number, missing: number): number {
  const text = readText(folder + 'gpio' + pin);
  return text === null ? missing : Number(text.trim());
}

function input(o: { pin: number; pull: Pull; inverted: boolean }): Readable {
  const { pin, inverted } = o;
  const idle = o.pull === 'up' ? 1 : 0;
  return { read: () => (level(pin, idle) ? 1 : 0) ^ (inverted ? 1 : 0), close: closed };
}

function output(o: { pin: number; inverted: boolean; initial: number }): Writable {
  const { pin, inverted } = o;
  const write = (value: number): void => writeText(folder + 'gpio' + pin, String((value ? 1 : 0) ^ (inverted ? 1 : 0)));
  write(o.initial);
  return { write, close: closed };
}

/** An I2C part played from its file (see above); the Pico's own messages for a part that does not answer. */
class FileI2c implements Closable {
  private readonly path: string;
  private last = '';

  constructor(options: Record<string, unknown>) {
    const address = Number(options.address);
    this.path = folder + 'i2c-' + String(options.data) + '-' + String(options.clock) + '-' + (address < 16 ? '0' : '') + address.toString(16);
  }

  write(bytes: ArrayBufferLike | ArrayBufferView): void {
    if (!File.exists(this.path)) throw new Error('write failed');
    this.last = hex(bytes);
  }

  read(into: number | ArrayBufferView): ArrayBuffer | number {
    const text = readText(this.path);
    const answer = text === null ? undefined : (JSON.parse(text) as Record<string, string>)[this.last];
    if (answer === undefined) throw new Error('read failed');
    const bytes = new Uint8Array(answer.length / 2);
    for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(answer.slice(2 * i, 2 * i + 2), 16);
    if (typeof into === 'number') return bytes.buffer.slice(0, into);
    new Uint8Array(into.buffer, into.byteOffset, into.byteLength).set(bytes.subarray(0, into.byteLength));
    return into.byteLength;
  }

  writeRead(bytes: ArrayBufferView, into: number | ArrayBufferView): ArrayBuffer | number {
    this.write(bytes);
    return this.read(into);
  }

  readUint8(register: number): number {
    return new Uint8Array(this.writeRead(Uint8Array.of(register), 1) as ArrayBuffer)[0];
  }

  readUint16(register: number, bigEndian?: boolean): number {
    const b = new Uint8Array(this.writeRead(Uint8Array.of(register), 2) as ArrayBuffer);
    return bigEndian ? (b[0] << 8) | b[1] : (b[1] << 8) | b[0];
  }

  writeUint8(register: number, value: number): void {
    this.write(Uint8Array.of(register, value));
  }

  writeUint16(register: number, value: number, bigEndian?: boolean): void {
    this.write(bigEndian ? Uint8Array.of(register, value >> 8, value & 0xff) : Uint8Array.of(register, value & 0xff, value >> 8));
  }

  close(): void {}
}

function hex(bytes: ArrayBufferLike | ArrayBufferView): string {
  const view = ArrayBuffer.isView(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : new Uint8Array(bytes);
  let text = '';
  for (let i = 0; i < view.length; i++) text += (view[i] < 16 ? '0' : '') + view[i].toString(16);
  return text;
}

export const board: Board | null = folder === ''
  ? null
  : Object.freeze({
      name: 'the simulator',
      pins: 64,
      reserved: Object.freeze({}),
      unit: () => null,
      input,
      output,
      analog: (pin: number): AnalogPin => ({ resolution: 12, read: () => level(pin, 0), close: closed }),
      counter: (o: { pin: number }): Readable => ({ read: () => level(o.pin, 0), close: closed }),
      pwm: (o: { pin: number }): PwmPin => ({ resolution: 10, write: (duty: number) => writeText(folder + 'gpio' + o.pin, String(duty)), close: closed }),
      i2c: FileI2c,
    });
