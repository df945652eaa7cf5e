// The description of a device's hardware (platforms/moddable/peripherals), on Node: what a description
// becomes, every problem of a bad one on one line with the good entries kept, and the peripherals it opens
// on a board of stand-in pins: debounce, scaling, pulse totals and rates, an I2C sensor shared by two
// resources that stops answering and comes back, relays and PWM driven by commands. The SDK's real IO
// classes and sensor drivers run in the Pico W's image in rp2040js (pico.test.ts) and on lin (lin.test.ts).
import { describe, expect, it } from 'vitest';
import type { Board, BoardFacts, Closable } from '../../platforms/moddable/peripherals/board';
import { readDescription } from '../../platforms/moddable/peripherals/description';
import type { DescriptionContext } from '../../platforms/moddable/peripherals/description';
import { findDrivers } from '../../platforms/moddable/peripherals/drivers';
import type { DriverClass } from '../../platforms/moddable/peripherals/i2c-sensor';
import { openPeripherals } from '../../platforms/moddable/peripherals/open';
import type { Feed } from '../../src/core/wire/wire';

const PICO: BoardFacts = {
  name: 'the Pico W',
  pins: 30,
  reserved: { 23: "the radio's power line", 25: "the radio's chip select" },
  unit: (_kind, pin) => 'PWM slice ' + ((pin >> 1) & 7),
};
const SHT3X = 'embedded:sensor/Humidity-Temperature/SHT3x';
const DRIVERS = findDrivers(['mc/config', SHT3X + '.xsb', 'embedded:sensor/Temperature/TMP117', 'embedded:io/digital']);

function context(extra: Partial<DescriptionContext> = {}): DescriptionContext {
  return { every: 10_000, commandEvery: 5_000, board: PICO, driver: DRIVERS.lookup, drivers: DRIVERS.names, taken: [201], ...extra };
}

/** The greenhouse of the README: a contact, an SHT3x's two readings, an analog probe, a meter, a relay, a fan. */
const GREENHOUSE = {
  door: { resource: 101, type: 'digital', pin: 15, pull: 'up', inverted: true, debounce: 50, every: 1000, heartbeatMs: 600_000 },
  air: { resource: 102, type: 'i2c', driver: 'sht3x', data: 4, clock: 5, property: 'temperature', decimals: 1, deadband: 0.2, aggregate: 'mean' },
  humidity: { resource: 103, type: 'i2c', driver: 'SHT3x', data: 4, clock: 5, address: '0x44', property: 'hygrometer.humidity' },
  soil: { resource: 104, type: 'analog', pin: 26, scale: 0.0244, offset: -5, decimals: 1, deadbandPercent: 2, minIntervalMs: 30_000 },
  meter: { resource: 105, type: 'pulses', pin: 7, pull: 'up', perPulse: 0.5, report: 'total' },
  irrigation: { resource: 107, type: 'relay', pin: 16, initial: 0, state: 108 },
  fan: { resource: 106, type: 'pwm', pin: 18, hz: 25_000, min: 0, max: 100 },
};

describe('a description of the hardware', () => {
  it('reads every kind, with defaults for what it leaves out, and the report-by-exception settings of the sources', () => {
    const d = readDescription(GREENHOUSE, context());
    expect(d.problems).toEqual([]);
    expect(d.peripherals).toEqual([
      { name: 'door', resource: 101, every: 1000, type: 'digital', pin: 15, pull: 'up', inverted: true, debounce: 50 },
      { name: 'air', resource: 102, every: 10_000, type: 'i2c', driver: SHT3X, data: 4, clock: 5, address: -1, hz: 0, property: 'temperature', retryMs: 30_000, decimals: 1 },
      { name: 'humidity', resource: 103, every: 10_000, type: 'i2c', driver: SHT3X, data: 4, clock: 5, address: 0x44, hz: 0, property: 'hygrometer.humidity', retryMs: 30_000, decimals: -1 },
      { name: 'soil', resource: 104, every: 10_000, type: 'analog', pin: 26, scale: 0.0244, offset: -5, decimals: 1 },
      { name: 'meter', resource: 105, every: 10_000, type: 'pulses', pin: 7, pull: 'up', edge: 'falling', perPulse: 0.5, report: 'total', per: 60_000, decimals: -1 },
      { name: 'irrigation', resource: 107, every: 5_000, type: 'relay', pin: 16, inverted: false, initial: 0, levels: { '1': 1, '0': 0, true: 1, false: 0, on: 1, off: 0 }, state: 108 },
      { name: 'fan', resource: 106, every: 5_000, type: 'pwm', pin: 18, hz: 25_000, min: 0, max: 100, initial: 0, state: 0 },
    ]);
    expect(d.reporting).toEqual([
      { resource: 101, heartbeatMs: 600_000 },
      { resource: 102, deadband: 0.2, aggregate: 'mean' },
      { resource: 104, deadbandPercent: 2, minIntervalMs: 30_000 },
    ]);
  });

  it('names every problem, in one list, and keeps the entries that have none', () => {
    const d = readDescription({
      ...GREENHOUSE,
      // The contact's pin again, a driver this build has not, an address beyond 7 bits.
      window: { resource: 110, type: 'digital', pin: 15 },
      co2: { resource: 111, type: 'i2c', driver: 'scd41', data: 4, clock: 5, property: 'co2' },
      light: { resource: 112, type: 'i2c', driver: 'tmp117', data: 4, clock: 5, address: 200, property: 'temperature' },
      radio: { resource: 113, type: 'digital', pin: 25 },
      typo: { resource: 114, type: 'analog', pni: 27 },
      again: { resource: 201, type: 'analog', pin: 28 },
      valve: { resource: 115, type: 'relay', pin: 17, deadband: 1, levels: { open: 2 } },
      // The meter's PWM slice (pin 7 is slice 3's B input): a PWM output on pin 6 would set its clock.
      heater: { resource: 116, type: 'pwm', pin: 6 },
      // Report by exception checked by the core's rules, said as the entry's other problems are.
      probe: { resource: 117, type: 'analog', pin: 27, deadbandPercent: 150, aggregate: 'median', heartbeatMs: 0 },
    }, context());
    expect(d.problems).toEqual([
      'co2: unknown driver "scd41" (this build has SHT3x, TMP117; another of the SDK\'s: include its manifest, $(MODDABLE)/modules/drivers/sensors/<part>/manifest.json)',
      'light: address: expected a 7-bit I2C address from 0x08 to 0x77, as a number or "0x44", got 200',
      'radio: pin: pin 25 is the radio\'s chip select on the Pico W',
      'typo: pin: missing',
      'typo: pni: unknown key',
      'valve: levels: expected an object of command values to 0 or 1, e.g. { "on": 1, "off": 0 }, got {"open":2}',
      'valve: deadband: unknown key',
      'probe: deadbandPercent: expected a number in [0, 100], got 150',
      'probe: heartbeatMs: expected a number of ms ≥ 1, got 0',
      'probe: aggregate: expected "mean", "min" or "max", got "median"',
      'pin 15 is used twice: door, window',
      'again: resource 201 is in resources= too',
      'heater and meter need the same PWM slice 3',
    ]);
    expect(d.peripherals.map((p) => p.name)).toEqual(['air', 'humidity', 'soil', 'irrigation', 'fan']);
    expect(d.reporting.map((r) => r.resource)).toEqual([102, 104]);
  });

  it('has no pins to give where the board has none, and still reads the board\'s own readings', () => {
    const d = readDescription({ door: GREENHOUSE.door, die: { resource: 120, type: 'board', reading: 'temperature' } }, context({ board: null }));
    expect(d.problems).toEqual(['door: this build has no pins (on the simulator, pins=<folder> gives it stand-in pins)']);
    expect(d.peripherals).toEqual([{ name: 'die', resource: 120, every: 10_000, type: 'board', reading: 'temperature', decimals: -1 }]);
  });

  it('finds the SDK\'s drivers by their part\'s name, in any case, or by their module\'s', () => {
    expect(DRIVERS.names).toEqual(['SHT3x', 'TMP117']);
    expect(DRIVERS.lookup('sht3x')).toBe(SHT3X);
    expect(DRIVERS.lookup(SHT3X)).toBe(SHT3X);
    expect(DRIVERS.lookup('embedded:sensor/Temperature/LM75')).toBe(null);
  });
});

/** Pins held in memory, as a test drives them; the PWM's and outputs' last writes kept. */
class MemoryBoard implements Board {
  readonly name = 'the test board';
  readonly pins = 30;
  readonly reserved = {};
  readonly levels = new Map<number, number>();
  readonly edges = new Map<number, () => void>();
  readonly opened: number[] = [];
  unit(): null {
    return null;
  }
  private open(pin: number): void {
    if (this.opened.includes(pin)) throw new Error('in use');
    this.opened.push(pin);
  }
  private pinIo(pin: number, invert = false) {
    return { read: () => (this.levels.get(pin) ?? 0) ^ (invert ? 1 : 0), write: (v: number) => void this.levels.set(pin, v ^ (invert ? 1 : 0)), close: () => undefined };
  }
  input(o: { pin: number; inverted: boolean; onChange?: () => void }) {
    this.open(o.pin);
    if (o.onChange) this.edges.set(o.pin, o.onChange);
    return this.pinIo(o.pin, o.inverted);
  }
  output(o: { pin: number; inverted: boolean; initial: number }) {
    this.open(o.pin);
    const io = this.pinIo(o.pin, o.inverted);
    io.write(o.initial);
    return io;
  }
  analog(pin: number) {
    if (pin < 26) throw new Error('not analog pin');
    this.open(pin);
    return { ...this.pinIo(pin), resolution: 12 };
  }
  counter(o: { pin: number }) {
    this.open(o.pin);
    return this.pinIo(o.pin);
  }
  pwm(o: { pin: number }) {
    this.open(o.pin);
    return { ...this.pinIo(o.pin), resolution: 10 };
  }
  /** The I2C parts on the bus, by address: what each answers, or null when it does not. */
  readonly parts = new Map<number, { sample: () => unknown } | null>();
  readonly busesOpen: number[] = [];
  get i2c(): Board['i2c'] {
    const board = this;
    return class implements Closable {
      readonly address: number;
      constructor(options: Record<string, unknown>) {
        if ((options.data as number) > (options.clock as number)) throw new Error('invalid configuration');
        this.address = options.address as number;
        board.busesOpen.push(this.address);
      }
      close(): void {
        board.busesOpen.splice(board.busesOpen.indexOf(this.address), 1);
      }
    } as unknown as Board['i2c'];
  }
}

/** A driver of the sensor class pattern: its constructor talks to the part, as sht3x's soft reset does. */
function partDriver(board: MemoryBoard, samples: { count: number }): DriverClass {
  return class {
    private readonly address: number;
    constructor(options: { sensor: Record<string, unknown> }) {
      const io = options.sensor.io as new (o: Record<string, unknown>) => Closable;
      const bus = new io({ address: 0x44, hz: 1_000_000, ...options.sensor }) as unknown as { address: number };
      this.address = bus.address;
      if (!board.parts.get(this.address)) throw new Error('write failed');
    }
    sample(): unknown {
      const part = board.parts.get(this.address);
      if (!part) throw new Error('read failed');
      samples.count++;
      return part.sample();
    }
  };
}

describe('the peripherals a description opens', () => {
  const feed = (id: number): Feed => ({ id_resource_feed: id, id_resource: 0, raw_data: '', created_at: '' }) as Feed;

  function open(description: Record<string, unknown>, board = new MemoryBoard(), samples = { count: 0 }) {
    let ms = 0;
    const said: string[] = [];
    const d = readDescription(description, context());
    expect(d.problems).toEqual([]);
    const opened = openPeripherals(d.peripherals, {
      board,
      importDriver: () => partDriver(board, samples),
      now: () => ms,
      say: (text) => void said.push(text),
      boardReading: (reading) => (reading === 'uptime' ? () => ms / 1000 : 'not on this board'),
    });
    const read = (resource: number) => opened.sensors.find((s) => s.resource === resource)!.read();
    return { opened, board, said, read, samples, advance: (by: number) => void (ms += by) };
  }

  it('reads a contact through its debounce: a level counts once it held for the debounce', () => {
    const { board, read, advance } = open({ door: GREENHOUSE.door });
    // Pulled up and inverted: an open contact reads 0; closed, to ground, 1.
    board.levels.set(15, 1);
    expect(read(101)).toBe(0);
    board.levels.set(15, 0);
    board.edges.get(15)!();
    advance(20);
    expect(read(101)).toBe(0);
    advance(40);
    expect(read(101)).toBe(1);
  });

  it('scales an analog input, counts pulses as a total or a rate, and gives the board\'s readings', () => {
    const { board, read, advance, opened } = open({
      soil: GREENHOUSE.soil,
      meter: GREENHOUSE.meter,
      flow: { resource: 109, type: 'pulses', pin: 9, perPulse: 0.5, report: 'rate', per: 'minute', decimals: 2 },
      uptime: { resource: 121, type: 'board', reading: 'uptime' },
      rssi: { resource: 122, type: 'board', reading: 'rssi' },
    });
    board.levels.set(26, 2048);
    expect(read(104)).toBe(45);
    board.levels.set(7, 10);
    expect(read(105)).toBe(5);
    board.levels.set(9, 30);
    advance(30_000);
    // 30 pulses of half a litre in 30 s: 30 litres a minute.
    expect(read(109)).toBe(30);
    advance(60_000);
    expect(read(109)).toBe(0);
    expect(read(121)).toBe(90);
    expect(opened.skipped).toEqual(['rssi (not on this board)']);
  });

  it('samples an I2C part once for the two resources that read it; one that stops answering is said once and tried again on its own schedule', () => {
    const board = new MemoryBoard();
    board.parts.set(0x44, { sample: () => ({ hygrometer: { humidity: 55.04 }, thermometer: { temperature: 21.46 } }) });
    const { read, advance, said, samples, opened } = open({ air: { ...GREENHOUSE.air, every: 1000, retryMs: 5000 }, humidity: { ...GREENHOUSE.humidity, every: 1000 } }, board);
    expect([read(102), read(103)]).toEqual([21.5, 55.04]);
    expect(samples.count).toBe(1);
    advance(1000);
    board.parts.set(0x44, null);
    expect(() => read(102)).toThrow('read failed');
    expect(() => read(103)).toThrow(/^SHT3x at 0x44 on pins 4\/5 is not answering \(read failed\); next try in 5 s$/);
    advance(1000);
    expect(() => read(102)).toThrow(/next try in 4 s/);
    expect(opened.notAnswering()).toEqual(['SHT3x at 0x44 on pins 4/5']);
    // The bus was closed with the driver: the next try starts afresh, as after a power cut of the part.
    expect(board.busesOpen).toEqual([]);
    advance(4000);
    expect(() => read(102)).toThrow('write failed');
    board.parts.set(0x44, { sample: () => ({ hygrometer: { humidity: 60 }, thermometer: { temperature: 22 } }) });
    advance(5000);
    expect([read(102), read(103)]).toEqual([22, 60]);
    expect(said).toEqual(['SHT3x at 0x44 on pins 4/5 stopped answering: read failed; trying again every 5 s', 'SHT3x at 0x44 on pins 4/5 answers again, after 2 failed tries']);
    expect(opened.notAnswering()).toEqual([]);
  });

  it('opens a part that does not answer at boot, and reads it once it does; a bus that refuses its options is a problem of the description', () => {
    const board = new MemoryBoard();
    const { read, advance, said, opened } = open({ air: GREENHOUSE.air, other: { resource: 130, type: 'i2c', driver: 'sht3x', data: 9, clock: 8, property: 'temperature' } }, board);
    expect(said).toEqual(['SHT3x at 0x44 on pins 4/5 is not answering: write failed; trying again every 30 s']);
    expect(opened.problems).toEqual(['other: the I2C bus refused it: invalid configuration']);
    board.parts.set(0x44, { sample: () => ({ thermometer: { temperature: 19 } }) });
    advance(30_000);
    expect(read(102)).toBe(19);
  });

  it('names the sample\'s properties when the one asked for is not there', () => {
    const board = new MemoryBoard();
    board.parts.set(0x44, { sample: () => ({ hygrometer: {}, thermometer: { temperature: 20 } }) });
    const { read } = open({ humidity: GREENHOUSE.humidity }, board);
    expect(() => read(103)).toThrow('SHT3x at 0x44 on pins 4/5: no hygrometer.humidity in its sample; it has thermometer.temperature');
  });

  it('starts a relay in its stated level, drives it by command, and reports each level applied', async () => {
    const board = new MemoryBoard();
    const { opened, said } = open({ irrigation: { ...GREENHOUSE.irrigation, inverted: true, initial: 1 }, fan: { ...GREENHOUSE.fan, state: 109 } }, board);
    // Inverted: level 1 drives the pin low.
    expect(board.levels.get(16)).toBe(0);
    const recorded: [number, unknown][] = [];
    opened.begin((resource, value) => (recorded.push([resource, value]), true));
    expect(opened.resources).toEqual([108, 109]);
    const [relay, fan] = opened.actuators;
    await relay.handle(false, feed(7));
    await relay.handle('ON', feed(8));
    await fan.handle(50, feed(9));
    await fan.handle(150, feed(10));
    expect(() => relay.handle('maybe', feed(11))).toThrow('irrigation: command "maybe" is none of 0, 1, true, false, on, off');
    expect(board.levels.get(16)).toBe(0);
    expect(board.levels.get(18)).toBe(1023);
    expect(recorded).toEqual([[108, 1], [109, 0], [108, 0], [108, 1], [109, 50], [109, 100]]);
    expect(said).toEqual([
      'irrigation: pin 16 at 0 by command false (feed 7)',
      'irrigation: pin 16 at 1 by command "ON" (feed 8)',
      'fan: pin 18 at 50 by command 50 (feed 9)',
      'fan: pin 18 at 100 by command 150 (feed 10)',
    ]);
  });

  it('leaves out what the board refuses when it opens it, naming it', () => {
    const { opened } = open({ probe: { resource: 140, type: 'analog', pin: 3 }, door: GREENHOUSE.door });
    expect(opened.problems).toEqual(['probe: not analog pin']);
    expect(opened.names).toEqual(['door']);
  });
});
