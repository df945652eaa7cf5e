// The description of a device's hardware: the `peripherals` object of the manifest's config (mc/config),
// one entry per resource, keyed by a name of the user's. Checked here in one pass that names every
// problem; an entry with a problem is left out and the rest run (docs/peripherals.md is the reference).
import { reportProblems } from '../../../src/core/config';
import type { ReportConfig } from '../../../src/core/config';
import type { BoardFacts, Edge, Pull } from './board';

export type BoardReading = 'uptime' | 'heap' | 'rssi' | 'temperature';
interface Entry {
  /** The entry's key in the description, in every message about it. */
  name: string;
  resource: number;
  /** Sampling period of a source, polling period of an output, ms. */
  every: number;
}

/** Readings rounded to this many decimals; -1: as read. */
interface Rounded {
  decimals: number;
}

export interface DigitalInput extends Entry {
  type: 'digital';
  pin: number;
  pull: Pull;
  /** 1 when the pin is low (a contact to ground with a pull-up). */
  inverted: boolean;
  /** A level is taken once it has held this long, ms (0: as read). */
  debounce: number;
}

export interface AnalogInput extends Entry, Rounded {
  type: 'analog';
  pin: number;
  /** The reading is raw × scale + offset (raw from 0 to 2^resolution − 1). */
  scale: number;
  offset: number;
}

export interface PulseInput extends Entry, Rounded {
  type: 'pulses';
  pin: number;
  pull: Pull;
  edge: Edge;
  /** Units each pulse stands for (litres, Wh, …). */
  perPulse: number;
  /** 'total': units since the firmware started; 'rate': units per `per` ms over the last period. */
  report: 'total' | 'rate';
  per: number;
}

export interface I2cInput extends Entry, Rounded {
  type: 'i2c';
  /** The module of the SDK's ECMA-419 sensor driver (embedded:sensor/…), resolved from the name given. */
  driver: string;
  data: number;
  clock: number;
  /** 7-bit address; -1: the driver's own default. */
  address: number;
  /** Bus speed; 0: the driver's own. */
  hz: number;
  /** The sample's property: `temperature`, or a path, `thermometer.temperature`. */
  property: string;
  /** After the sensor stopped answering, it is tried again this often, ms. */
  retryMs: number;
}

export interface BoardInput extends Entry, Rounded {
  type: 'board';
  reading: BoardReading;
}

export interface RelayOutput extends Entry {
  type: 'relay';
  pin: number;
  /** The pin is low for level 1 (an active-low relay board). */
  inverted: boolean;
  /** The level from boot until the first command. */
  initial: number;
  /** A command's value, as text, to the level it sets. */
  levels: Readonly<Record<string, number>>;
  /** The resource the applied level is reported on; 0: none. */
  state: number;
}

export interface PwmOutput extends Entry {
  type: 'pwm';
  pin: number;
  hz: number;
  /** A setpoint from min to max is a duty from 0 to 100 %; beyond, it is clamped. */
  min: number;
  max: number;
  initial: number;
  state: number;
}

export type Source = DigitalInput | AnalogInput | PulseInput | I2cInput | BoardInput;
export type Output = RelayOutput | PwmOutput;
export type Peripheral = Source | Output;

/** The drivers of this build: the name given in a description, to the module that holds it, or null. */
export type DriverLookup = (name: string) => string | null;

export interface DescriptionContext {
  every: number;
  commandEvery: number;
  /** null: this build has no pins (the simulator without a folder of stand-in pins). */
  board: BoardFacts | null;
  driver: DriverLookup;
  /** The drivers this build has, for the message about one it has not. */
  drivers: readonly string[];
  /** Resource ids the firmware feeds already (`resources=`). */
  taken: readonly number[];
}

export interface Description {
  peripherals: Peripheral[];
  /** Report by exception of the sources that carry its keys, for the core's `AgentConfig.reporting`. */
  reporting: ReportConfig[];
  /** One line each: what is wrong, naming the entry; the entries it names are left out. */
  problems: string[];
}

/** A command's value as text, to a relay's level, unless the description gives its own. */
const LEVELS: Readonly<Record<string, number>> = Object.freeze({ '1': 1, '0': 0, true: 1, false: 0, on: 1, off: 0 });
const PULLS = Object.freeze(['up', 'down', 'none']);
const EDGES = Object.freeze(['rising', 'falling']);
/** The readings a board gives without extra hardware (firmware/sensors.ts reads them). */
export const BOARD_READINGS: readonly BoardReading[] = Object.freeze(['uptime', 'heap', 'rssi', 'temperature'] as const);
/** The keys of report by exception a source may carry beside its own (the core's `ReportConfig`). */
const REPORT_KEYS = Object.freeze(['deadband', 'deadbandPercent', 'minIntervalMs', 'heartbeatMs', 'aggregate']);
const PER = Object.freeze({ second: 1000, minute: 60_000, hour: 3_600_000 } as Record<string, number>);
const RETRY_MS = 30_000;
const TYPES = Object.freeze(['digital', 'analog', 'pulses', 'i2c', 'board', 'relay', 'pwm']);

/** Reads and checks `value`, the config's `peripherals`: every problem at once, the good entries kept. */
export function readDescription(value: unknown, context: DescriptionContext): Description {
  const problems: string[] = [];
  const peripherals: Peripheral[] = [];
  const reporting: ReportConfig[] = [];
  if (value === undefined || value === '') return { peripherals, reporting, problems };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push('expected an object of named entries, e.g. "door": { "resource": 101, "type": "digital", "pin": 15 }');
    return { peripherals, reporting, problems };
  }
  const entries = value as Record<string, unknown>;
  for (const name of Object.keys(entries)) {
    const fields = new Fields(name, entries[name], problems);
    const entry = fields.ok ? readEntry(fields, context) : null;
    // Outputs have no reporting keys: done() names them unknown there.
    const r = entry !== null && isSource(entry) ? readReporting(fields, entry.resource) : null;
    if (entry === null || !fields.done()) continue;
    peripherals.push(entry);
    if (r !== null) reporting.push(r);
  }
  const left = crossCheck(peripherals, context, problems);
  return { peripherals: left, reporting: reporting.filter((r) => left.some((p) => p.resource === r.resource)), problems };
}

export function isSource(p: Peripheral): p is Source {
  return p.type !== 'relay' && p.type !== 'pwm';
}

function readEntry(f: Fields, c: DescriptionContext): Peripheral | null {
  const type = f.choice('type', TYPES, null);
  const resource = f.whole('resource', 1, null);
  if (type === null || resource === null) return null;
  const output = type === 'relay' || type === 'pwm';
  const base = { name: f.name, resource, every: f.whole('every', 100, output ? c.commandEvery : c.every) ?? 0 };
  if (type === 'board') return { ...base, type, reading: f.choice('reading', BOARD_READINGS, null) as BoardReading, decimals: f.decimals() };
  if (c.board === null) {
    f.problem('this build has no pins (on the simulator, pins=<folder> gives it stand-in pins)');
    return null;
  }
  const pin = (key: string): number => f.pin(key, c.board as BoardFacts);
  switch (type) {
    case 'digital':
      return { ...base, type, pin: pin('pin'), pull: f.choice('pull', PULLS, 'none') as Pull, inverted: f.flag('inverted'), debounce: f.whole('debounce', 0, 0) ?? 0 };
    case 'analog':
      return { ...base, type, pin: pin('pin'), scale: f.finite('scale', 1), offset: f.finite('offset', 0), decimals: f.decimals() };
    case 'pulses': {
      const report = f.choice('report', Object.freeze(['total', 'rate']), 'total') as 'total' | 'rate';
      const per = PER[f.choice('per', Object.freeze(['second', 'minute', 'hour']), 'minute') ?? 'minute'];
      return { ...base, type, pin: pin('pin'), pull: f.choice('pull', PULLS, 'none') as Pull, edge: f.choice('edge', EDGES, 'falling') as Edge, perPulse: f.finite('perPulse', 1), report, per, decimals: f.decimals() };
    }
    case 'i2c': {
      const name = f.text('driver');
      const driver = name === null ? null : c.driver(name);
      if (name !== null && driver === null) {
        f.problem('unknown driver "' + name + '" (this build has ' + (c.drivers.length > 0 ? c.drivers.join(', ') : 'none') +
          '; another of the SDK\'s: include its manifest, $(MODDABLE)/modules/drivers/sensors/<part>/manifest.json)');
      }
      const property = f.text('property');
      return { ...base, type, driver: driver ?? '', data: pin('data'), clock: pin('clock'), address: f.address(), hz: f.whole('hz', 1, 0) ?? 0, property: property ?? '', retryMs: f.whole('retryMs', 100, RETRY_MS) ?? 0, decimals: f.decimals() };
    }
    case 'relay': {
      const levels = f.levels();
      const initial = f.choice('initial', Object.freeze([0, 1]), 0) ?? 0;
      return { ...base, type, pin: pin('pin'), inverted: f.flag('inverted'), initial, levels, state: f.whole('state', 1, 0) ?? 0 };
    }
    default: {
      const min = f.finite('min', 0);
      const max = f.finite('max', 100);
      if (!(max > min)) f.problem('max (' + max + ') must be above min (' + min + ')');
      const initial = f.finite('initial', min);
      return { ...base, type: 'pwm', pin: pin('pin'), hz: f.whole('hz', 1, 1000) ?? 0, min, max, initial, state: f.whole('state', 1, 0) ?? 0 };
    }
  }
}

/** A source's report-by-exception keys, checked by the core's own rules (the agent's, the simulator's, the gateway's). */
function readReporting(f: Fields, resource: number): ReportConfig | null {
  const settings: Record<string, unknown> = {};
  for (const key of REPORT_KEYS) if (f.given(key)) settings[key] = f.value(key);
  if (Object.keys(settings).length === 0) return null;
  const problems = reportProblems(settings, f.name + '.');
  // Said as every other problem of the entry is: "door: deadband: …", not the core's "door.deadband: …".
  for (const problem of problems) f.problem(problem.slice(f.name.length + 1));
  return problems.length > 0 ? null : ({ ...settings, resource } as ReportConfig);
}

/** Pins used twice, a unit two entries need, resources given twice, one address with two drivers: all involved are left out. */
function crossCheck(list: Peripheral[], c: DescriptionContext, problems: string[]): Peripheral[] {
  const out: string[] = [];
  const claims: { pin: number; name: string; bus: string }[] = [];
  const ids: { id: number; name: string }[] = c.taken.map((id) => ({ id, name: 'resources=' }));
  const devices: { key: string; name: string; driver: string }[] = [];
  const units: { unit: string; name: string }[] = [];
  const fail = (names: string[], text: string): void => {
    problems.push(text);
    for (const n of names) if (out.indexOf(n) < 0) out.push(n);
  };
  for (const p of list) {
    for (const id of [p.resource, 'state' in p ? p.state : 0]) {
      if (id === 0) continue;
      const other = ids.find((x) => x.id === id);
      if (other !== undefined) fail([p.name, other.name], p.name + ': resource ' + id + (other.name === p.name ? ' is its own state too' : other.name === 'resources=' ? ' is in resources= too' : ' is also ' + other.name + '\'s'));
      else ids.push({ id, name: p.name });
    }
    if (p.type === 'board') continue;
    // One I2C bus is one pair of pins, which every sensor on it shares.
    const bus = p.type === 'i2c' ? 'i2c ' + p.data + '/' + p.clock : '';
    for (const pin of p.type === 'i2c' ? [p.data, p.clock] : [p.pin]) {
      const other = claims.find((x) => x.pin === pin && (bus === '' || x.bus !== bus) && x.name !== p.name);
      if (other !== undefined) fail([p.name, other.name], 'pin ' + pin + ' is used twice: ' + other.name + ', ' + p.name);
      else claims.push({ pin, name: p.name, bus });
    }
    if (p.type === 'i2c' && p.data === p.clock) fail([p.name], p.name + ': data and clock are both pin ' + p.data);
    if (p.type === 'i2c') {
      const key = bus + ' ' + (p.address < 0 ? p.driver : String(p.address));
      const other = devices.find((d) => d.key === key && d.driver !== p.driver);
      if (other !== undefined) fail([p.name, other.name], p.name + ': address 0x' + p.address.toString(16) + ' on ' + bus + ' has another driver in ' + other.name);
      devices.push({ key, name: p.name, driver: p.driver });
    }
    const unit = (p.type === 'pulses' || p.type === 'pwm') && c.board !== null ? c.board.unit(p.type, p.pin) : null;
    if (unit !== null) {
      const other = units.find((u) => u.unit === unit);
      if (other !== undefined) fail([p.name, other.name], p.name + ' and ' + other.name + ' need the same ' + unit);
      else units.push({ unit, name: p.name });
    }
  }
  return list.filter((p) => out.indexOf(p.name) < 0);
}

/** One entry's fields: each read names its problem with the entry; keys never read are unknown. */
class Fields {
  readonly ok: boolean;
  private readonly record: Record<string, unknown>;
  private readonly read: string[] = [];
  private count: number;

  constructor(
    readonly name: string,
    value: unknown,
    private readonly problems: string[],
  ) {
    this.ok = typeof value === 'object' && value !== null && !Array.isArray(value);
    this.record = this.ok ? (value as Record<string, unknown>) : {};
    this.count = problems.length;
    if (!this.ok) this.problem('expected an object, e.g. { "resource": 101, "type": "digital", "pin": 15 }');
  }

  problem(text: string): void {
    this.problems.push(this.name + ': ' + text);
  }

  given(key: string): boolean {
    if (this.read.indexOf(key) < 0) this.read.push(key);
    return this.record[key] !== undefined;
  }

  /** The value of `key`, as given. */
  value(key: string): unknown {
    return this.record[key];
  }

  /** True when every key was read and none had a problem; names the unknown keys once. */
  done(): boolean {
    for (const key of Object.keys(this.record)) {
      if (this.read.indexOf(key) < 0) {
        this.read.push(key);
        this.problem(key + ': unknown key');
      }
    }
    return this.problems.length === this.count;
  }

  private bad(key: string, expected: string): null {
    this.problem(key + ': expected ' + expected + ', got ' + JSON.stringify(this.record[key]));
    return null;
  }

  /** A whole number ≥ least; `fallback` when absent (null: required). */
  whole(key: string, least: number, fallback: number | null): number | null {
    if (!this.given(key)) return fallback === null ? this.missing(key) : fallback;
    const v = this.record[key];
    return Number.isSafeInteger(v) && (v as number) >= least ? (v as number) : this.bad(key, 'a whole number ≥ ' + least);
  }

  finite(key: string, fallback: number): number {
    if (!this.given(key)) return fallback;
    const v = this.record[key];
    if (typeof v === 'number' && isFinite(v)) return v;
    this.bad(key, 'a number');
    return fallback;
  }

  flag(key: string): boolean {
    if (!this.given(key)) return false;
    const v = this.record[key];
    if (typeof v === 'boolean') return v;
    this.bad(key, 'true or false');
    return false;
  }

  text(key: string): string | null {
    if (!this.given(key)) return this.missing(key);
    const v = this.record[key];
    return typeof v === 'string' && v !== '' ? v : this.bad(key, 'a name');
  }

  choice<T extends string | number>(key: string, among: readonly T[], fallback: T | null): T | null {
    if (!this.given(key)) return fallback === null ? this.missing(key) : fallback;
    const v = this.record[key] as T;
    return among.indexOf(v) >= 0 ? v : this.bad(key, 'one of ' + among.map((x) => JSON.stringify(x)).join(', '));
  }

  decimals(): number {
    return this.whole('decimals', 0, -1) ?? -1;
  }

  pin(key: string, board: BoardFacts): number {
    const pin = this.whole(key, 0, null);
    if (pin === null) return -1;
    if (pin >= board.pins) this.problem(key + ': ' + board.name + ' has no pin ' + pin + ' (0 to ' + (board.pins - 1) + ')');
    else if (board.reserved[pin] !== undefined) this.problem(key + ': pin ' + pin + ' is ' + board.reserved[pin] + ' on ' + board.name);
    return pin;
  }

  /** A 7-bit address, as a number or as "0x44" (JSON has no hex); -1 when absent. */
  address(): number {
    if (!this.given('address')) return -1;
    const v = this.record.address;
    const n = typeof v === 'string' && /^0x[0-9a-f]{1,2}$/i.test(v) ? parseInt(v.slice(2), 16) : v;
    if (Number.isSafeInteger(n) && (n as number) >= 0x08 && (n as number) <= 0x77) return n as number;
    this.bad('address', 'a 7-bit I2C address from 0x08 to 0x77, as a number or "0x44"');
    return -1;
  }

  /** A relay's `levels`: command text to 0 or 1. */
  levels(): Readonly<Record<string, number>> {
    if (!this.given('levels')) return LEVELS;
    const v = this.record.levels;
    const levels: Record<string, number> = {};
    // Matched without regard to case: "ON" from a dashboard is "on".
    const good = typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length > 0 &&
      Object.keys(v).every((k) => {
        const level = (v as Record<string, unknown>)[k];
        levels[k.toLowerCase()] = level as number;
        return level === 0 || level === 1;
      });
    if (!good) this.bad('levels', 'an object of command values to 0 or 1, e.g. { "on": 1, "off": 0 }');
    return good ? Object.freeze(levels) : LEVELS;
  }

  private missing(key: string): null {
    this.problem(key + ': missing');
    return null;
  }
}
