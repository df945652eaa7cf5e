// An I2C sensor through one of the SDK's ECMA-419 sensor drivers (modules/drivers/sensors): one driver
// per bus and address, sampled once for every entry that reads a property of it. A sensor that stops
// answering (a NACK, a timeout, a driver's own error) is said once, then left alone and tried again every
// `retryMs`: a sensor that is gone costs the others one bus timeout per retry, not one per reading.
import { errorText } from '../../../src/core/wire/errors';
import type { Board, Closable } from './board';
import type { I2cInput } from './description';
import { rounded } from './inputs';

/** A driver of the sensor class pattern: `new Driver({ sensor: { ...bus, io }, onError })`, then sample(). */
export interface SensorDriver {
  sample(): unknown;
  close?(): void;
}
export type DriverClass = new (options: { sensor: Record<string, unknown>; onError: (message: string) => void }) => SensorDriver;

/** Thrown by `open` when the bus itself refused its options (pins, address, speed): the description is wrong, no retry helps. */
export class BusRefused extends Error {
  override get name(): string {
    return 'BusRefused';
  }
}

export class I2cSensor {
  /** Shorter than any period of the entries sharing it: one sample serves all the reads of one turn. */
  holdMs: number;
  failures = 0;
  /** The address the driver opened its bus at, its own default when the description gave none; -1 before. */
  private address = -1;
  private driver: SensorDriver | null = null;
  private bus: Closable | null = null;
  private busRefused: unknown = null;
  private driverError = '';
  private last: unknown = null;
  /** [taken at, retry at, down (1) or up (0)], ms. */
  private readonly times = new Float64Array(3);

  constructor(
    readonly first: I2cInput,
    private readonly Driver: DriverClass,
    private readonly board: Board,
    private readonly now: () => number,
    private readonly say: (text: string) => void,
  ) {
    this.holdMs = first.every / 2;
    this.times[0] = -Infinity;
  }

  /** False from a failed try until one succeeds. */
  get answering(): boolean {
    return this.times[2] === 0;
  }

  /** In messages: "SHT3x at 0x44 on pins 4/5". */
  get label(): string {
    const { driver, data, clock } = this.first;
    return driver.slice(driver.lastIndexOf('/') + 1) + ' at ' + (this.address < 0 ? 'its default address' : '0x' + this.address.toString(16)) + ' on pins ' + data + '/' + clock;
  }

  /** Whether `p` reads this sensor: the same driver, bus and address (its default, once the driver named it). */
  serves(p: I2cInput): boolean {
    const f = this.first;
    return p.driver === f.driver && p.data === f.data && p.clock === f.clock && (p.address === f.address || p.address === this.address);
  }

  /**
   * Opens the driver at boot. Throws BusRefused when the bus refused its options; a sensor that does not
   * answer is only said (it is tried again on its schedule).
   */
  open(): void {
    try {
      this.connect();
    } catch (e) {
      if (this.busRefused !== null) throw new BusRefused(errorText(this.busRefused));
      this.failed(e, 'is not answering');
    }
  }

  /** A reader of `p`'s property: where it sits in a sample is found in the first one, then kept. */
  reader(p: I2cInput): () => number {
    const paths: string[][] = [];
    return () => {
      const sample = this.sample();
      if (paths.length === 0) {
        const path = resolve(sample, p.property);
        if (path !== null) paths.push(path);
      }
      let value: unknown = sample;
      for (const key of paths[0] ?? []) value = (value as Record<string, unknown> | undefined)?.[key];
      if (paths.length === 0 || typeof value !== 'number') {
        // A driver leaves out a value it could not read (sht3x: a bad checksum).
        throw new Error(this.label + ': no ' + p.property + ' in its sample' + (this.driverError === '' ? '' : ' (' + this.driverError + ')') + '; it has ' + (leaves(sample).join(', ') || 'nothing'));
      }
      return rounded(value, p.decimals);
    };
  }

  sample(): unknown {
    const now = this.now();
    const t = this.times;
    if (now - t[0] < this.holdMs) return this.last;
    if (t[2] === 1 && now < t[1]) throw new Error(this.label + ' is not answering (' + this.driverError + '); next try in ' + Math.ceil((t[1] - now) / 1000) + ' s');
    try {
      if (this.driver === null) this.connect();
      this.driverError = '';
      const sample = (this.driver as SensorDriver).sample();
      if (t[2] === 1) this.say(this.label + ' answers again, after ' + this.failures + ' failed tr' + (this.failures === 1 ? 'y' : 'ies'));
      t[2] = 0;
      t[0] = now;
      this.last = sample;
      return sample;
    } catch (e) {
      this.failed(e, 'stopped answering');
      throw e;
    }
  }

  private connect(): void {
    const p = this.first;
    const sensor = this;
    const Bus = this.board.i2c;
    // The driver makes its bus with `new options.sensor.io(...)`: this constructor keeps it, so that it
    // can be closed (a driver that throws in its constructor leaves it open, and the address taken), and
    // tells a bus that refused its options from a sensor that does not answer.
    function io(options: Record<string, unknown>): Closable {
      sensor.address = Number(options.address);
      try {
        sensor.bus = new Bus(options);
      } catch (e) {
        sensor.busRefused = e;
        throw e;
      }
      return sensor.bus;
    }
    const options: Record<string, unknown> = { data: p.data, clock: p.clock, io };
    if (p.address >= 0) options.address = p.address;
    if (p.hz > 0) options.hz = p.hz;
    this.busRefused = null;
    this.driverError = '';
    this.driver = new this.Driver({ sensor: options, onError: (message) => void (this.driverError = message) });
    // Some drivers report a wrong part through onError and return unusable (tmp117: "unexpected sensor").
    if (this.driverError !== '') throw new Error(this.driverError);
  }

  private failed(e: unknown, what: string): void {
    const t = this.times;
    this.failures++;
    if (this.driverError === '') this.driverError = errorText(e);
    if (t[2] === 0) this.say(this.label + ' ' + what + ': ' + this.driverError + '; trying again every ' + this.first.retryMs / 1000 + ' s');
    t[2] = 1;
    t[1] = this.now() + this.first.retryMs;
    this.last = null;
    t[0] = -Infinity;
    // A fresh start on the next try: the driver's constructor resets the part (sht3x: a soft reset).
    try {
      this.driver?.close?.();
    } catch {
      // The part is not answering: closing the driver may have asked it something.
    }
    this.driver = null;
    this.bus?.close();
    this.bus = null;
  }
}

/** Where `property` is in a sample: its own key, a key of one of its objects, or a dotted path. */
function resolve(sample: unknown, property: string): string[] | null {
  if (property.indexOf('.') >= 0) return property.split('.');
  const s = (sample ?? {}) as Record<string, unknown>;
  if (typeof s[property] === 'number') return [property];
  for (const key of Object.keys(s)) {
    const inner = s[key];
    if (typeof inner === 'object' && inner !== null && typeof (inner as Record<string, unknown>)[property] === 'number') return [key, property];
  }
  return null;
}

/** The numeric properties of a sample, as paths: what a description may name. */
function leaves(sample: unknown): string[] {
  const out: string[] = [];
  const s = (sample ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(s)) {
    const v = s[key];
    if (typeof v === 'number') out.push(key);
    else if (typeof v === 'object' && v !== null) for (const inner of Object.keys(v)) out.push(key + '.' + inner);
  }
  return out;
}
