// What a board gives the peripherals: its pins through the ECMA-419 IO classes of the Moddable SDK
// (embedded:io/digital, analog, pwm, smbus), wrapped per platform (../rp2040/board, ../esp32/board,
// ../lin/board) so that this folder never imports the SDK and runs in tests on Node as on the device.

export type Pull = 'up' | 'down' | 'none';
export type Edge = 'rising' | 'falling';

export interface Closable {
  close(): void;
}

/** A digital input, or a pulse counter: read() is the level (0 or 1), or the count of edges since it opened. */
export interface Readable extends Closable {
  read(): number;
}

export interface Writable extends Closable {
  write(value: number): void;
}

/** An analog input: read() gives 0 to 2^resolution − 1. */
export interface AnalogPin extends Readable {
  readonly resolution: number;
}

/** A PWM output: write() takes a duty from 0 to 2^resolution − 1. */
export interface PwmPin extends Writable {
  readonly resolution: number;
}

/** What the description's check needs to know of the board, before anything is opened. */
export interface BoardFacts {
  /** In messages: "the Pico W". */
  readonly name: string;
  /** GPIO numbers run from 0 to pins − 1. */
  readonly pins: number;
  /** Pins the board's own parts hold, with what holds them. */
  readonly reserved: Readonly<Record<number, string>>;
  /**
   * The hardware unit a pulse counter or a PWM output takes on `pin`, where two pins share one (the
   * RP2040's PWM slices: a counter and an output on one slice would set each other's clock): null where none is shared.
   */
  unit(kind: 'pulses' | 'pwm', pin: number): string | null;
}

export interface Board extends BoardFacts {
  /** `onChange` runs on every edge (the debounce's clock), where the board can tell. */
  input(options: { pin: number; pull: Pull; inverted: boolean; onChange?: () => void }): Readable;
  /** Drives `initial` from the moment it opens: a relay never passes through the other level at boot. */
  output(options: { pin: number; inverted: boolean; initial: number }): Writable;
  analog(pin: number): AnalogPin;
  /** Counts edges in hardware where the chip can, so that no pulse is lost while JavaScript is busy. */
  counter(options: { pin: number; pull: Pull; edge: Edge }): Readable;
  pwm(options: { pin: number; hz: number }): PwmPin;
  /**
   * The I2C class the SDK's sensor drivers construct (`new options.sensor.io({...})`): SMBus, which has the
   * plain reads and writes of I2C and the register reads some drivers use (tmp117's readUint16).
   */
  readonly i2c: new (options: Record<string, unknown>) => Closable;
}
