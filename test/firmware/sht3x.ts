// What an SHT3x answers, as its datasheet says (Sensirion SHT3x-DIS, 4.5 and 4.12): a measurement is the
// temperature's two bytes and their CRC-8, then the humidity's two and theirs; T = −45 + 175·St/65535 °C,
// RH = 100·Srh/65535 %; CRC-8 with polynomial 0x31, initial value 0xFF. The status register (0xF32D) is two
// bytes and their CRC. Played by the Pico W test on the emulated I2C bus, and by the lin test from a file.

export const SHT3X_MEASURE = 0x2c06;
export const SHT3X_STATUS = 0xf32d;

export function crc8(bytes: number[]): number {
  let crc = 0xff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let i = 0; i < 8; i++) crc = crc & 0x80 ? ((crc << 1) ^ 0x31) & 0xff : (crc << 1) & 0xff;
  }
  return crc;
}

function word(value: number): number[] {
  const bytes = [value >> 8, value & 0xff];
  return [...bytes, crc8(bytes)];
}

/** The 6 bytes of a measurement of `celsius` and `percent`. */
export function sht3xMeasurement(celsius: number, percent: number): number[] {
  return [...word(Math.round(((celsius + 45) * 65535) / 175)), ...word(Math.round((percent * 65535) / 100))];
}

/** The 3 bytes of the status register: no alert, the last command done. */
export function sht3xStatus(): number[] {
  return word(0);
}

/** What the driver reads back from a measurement of `celsius` (the 16-bit value's own rounding). */
export function sht3xCelsius(celsius: number): number {
  return (Math.round(((celsius + 45) * 65535) / 175) * 175) / 65535 - 45;
}

export function sht3xPercent(percent: number): number {
  return (Math.round((percent * 65535) / 100) * 100) / 65535;
}

/** The bus hooks an SHT3x needs from the emulated RP2040's I2C controller (rp2040js RPI2C). */
export interface I2cController {
  onStart: (repeated: boolean) => void;
  onConnect: (address: number, mode: number) => void;
  onWriteByte: (value: number) => void;
  onReadByte: (ack: boolean) => void;
  onStop: () => void;
  completeStart(): void;
  completeConnect(ack: boolean): void;
  completeWrite(ack: boolean): void;
  completeRead(value: number): void;
  completeStop(): void;
}

/**
 * An SHT3x on an emulated I2C bus, byte by byte: it answers the last command written (a measurement or
 * the status register) when it is read, and acknowledges nothing while `answering` is false, as a part
 * whose wire came loose. `reads` counts its measurements.
 */
export class Sht3xPart {
  celsius = 21.5;
  percent = 55;
  answering = true;
  reads = 0;
  private written: number[] = [];
  private out: number[] = [];

  constructor(bus: I2cController, address = 0x44) {
    bus.onStart = () => bus.completeStart();
    bus.onConnect = (at, mode) => {
      const ack = this.answering && at === address;
      // rp2040js I2CMode: 0 write, 1 read.
      if (ack && mode === 0) this.written = [];
      if (ack && mode === 1) this.out = this.answer();
      bus.completeConnect(ack);
    };
    bus.onWriteByte = (value) => {
      this.written.push(value);
      bus.completeWrite(true);
    };
    bus.onReadByte = () => bus.completeRead(this.out.shift() ?? 0xff);
    bus.onStop = () => bus.completeStop();
  }

  private answer(): number[] {
    const command = (this.written[0] << 8) | this.written[1];
    if (command === SHT3X_MEASURE) {
      this.reads++;
      return sht3xMeasurement(this.celsius, this.percent);
    }
    return command === SHT3X_STATUS ? sht3xStatus() : [];
  }
}
