// The simulator's signals, the plan it derives from a device's resources, and its config file check.
import { describe, expect, it } from 'vitest';
import { createRandom } from '../../src/core/host/random';
import type { Resource, Subtype } from '../../src/core/wire/wire';
import { parseSimConfig, SimConfigError } from '../../platforms/node/sim/config';
import { planFor, signalFor } from '../../platforms/node/sim/plan';
import { refusedReadings } from '../../platforms/node/sim/refusals';
import { createSignal, SIGNAL_NAMES, signalSpec } from '../../platforms/node/sim/signals';
import type { SignalName, SignalSpec } from '../../platforms/node/sim/signals';

function clockAt(ms: number) {
  const clock = { t: ms, now: () => clock.t };
  return clock;
}

function spec(name: SignalName, params: Record<string, unknown>): SignalSpec {
  const problems: string[] = [];
  const out = signalSpec(name, params, '', problems);
  expect(problems).toEqual([]);
  return out!;
}

describe('signals', () => {
  it('counter gives start, start+1, ... each once', () => {
    const read = createSignal(spec('counter', { start: 7 }), { now: () => 0, random: Math.random });
    expect(Array.from({ length: 5 }, read)).toEqual([7, 8, 9, 10, 11]);
  });

  it('constant repeats its value, of any kind', () => {
    const read = createSignal(spec('constant', { value: 'on' }), { now: () => 0, random: Math.random });
    expect([read(), read()]).toEqual(['on', 'on']);
  });

  it('sine starts mid-range, peaks at max a quarter period later and stays in range', () => {
    const clock = clockAt(5_000);
    const read = createSignal(spec('sine', { min: 10, max: 30, periodMs: 1000 }), { now: clock.now, random: Math.random });
    expect(read()).toBe(20);
    clock.t += 250;
    expect(read()).toBe(30);
    clock.t += 500;
    expect(read()).toBe(10);
    for (let i = 0; i < 100; i++) {
      clock.t += 37;
      const v = read() as number;
      expect(v).toBeGreaterThanOrEqual(10);
      expect(v).toBeLessThanOrEqual(30);
    }
  });

  it('square is high for the first half of each period, low for the second', () => {
    const clock = clockAt(0);
    const read = createSignal(spec('square', { low: 2, high: 9, periodMs: 100 }), { now: clock.now, random: Math.random });
    const seen: unknown[] = [];
    for (let i = 0; i < 4; i++) {
      seen.push(read());
      clock.t += 50;
    }
    expect(seen).toEqual([9, 2, 9, 2]);
  });

  it('random and random-walk stay within [min, max] with the decimals asked for', () => {
    const random = createRandom(42);
    const walk = createSignal(spec('random-walk', { min: -5, max: 5, step: 4, decimals: 1 }), { now: () => 0, random });
    const uniform = createSignal(spec('random', { min: 100, max: 101, decimals: 0 }), { now: () => 0, random });
    const walked = new Set<number>();
    for (let i = 0; i < 500; i++) {
      const w = walk() as number;
      walked.add(w);
      expect(w).toBeGreaterThanOrEqual(-5);
      expect(w).toBeLessThanOrEqual(5);
      expect(Math.round(w * 10)).toBeCloseTo(w * 10, 9);
      expect([100, 101]).toContain(uniform());
    }
    // It moves: a walk stuck at one edge would pass the range checks alone.
    expect(walked.size).toBeGreaterThan(20);
  });

  it('fills defaults, and names every missing, unknown or bad parameter', () => {
    expect(spec('random-walk', { min: 0, max: 10 })).toEqual({ signal: 'random-walk', min: 0, max: 10, start: 5, step: 0.5, decimals: 2 });
    const problems: string[] = [];
    expect(signalSpec('sine', { max: 'x', perodMs: 5 }, 'sensors[0].', problems)).toBeNull();
    expect(problems).toEqual([
      'sensors[0].perodMs: unknown key for the sine signal',
      'sensors[0].min: required by the sine signal',
      'sensors[0].max: expected a number, got "x"',
    ]);
    const swapped: string[] = [];
    signalSpec('random', { min: 3, max: 1 }, '', swapped);
    expect(swapped).toEqual(['min: must not be above max (3 > 1)']);
  });

  it('has six signals', () => {
    expect(SIGNAL_NAMES).toEqual(['constant', 'counter', 'sine', 'square', 'random', 'random-walk']);
  });
});

function subtype(begin: number, end: number, extra: Partial<Subtype> = {}): Subtype {
  return {
    id_resource_subtype: 1,
    id_resource_type: 1,
    name: 'x',
    name_i18n: 'X',
    description: null,
    data_format_operation: 0,
    data_restriction_regex: null,
    data_restriction_begin_range: begin,
    data_restriction_end_range: end,
    created_at: '2024-01-01 00:00:00',
    updated_at: '2024-01-01 00:00:00',
    ...extra,
  };
}

function resource(id: number, s: Subtype): Resource {
  return { id_resource: id, name: 'R' + id, subtype: s } as Resource;
}

describe('plan', () => {
  it('chooses a signal inside each range, and skips what it cannot fake', () => {
    expect(signalFor(subtype(0, 1))).toMatchObject({ signal: 'square', low: 0, high: 1 });
    expect(signalFor(subtype(0, 2147483647))).toMatchObject({ signal: 'counter', start: 0 });
    expect(signalFor(subtype(-40, 125, { name_i18n: 'Temperature' }))).toMatchObject({ signal: 'sine', min: 16, max: 28 });
    expect(signalFor(subtype(5, 35))).toMatchObject({ signal: 'random-walk', min: 5, max: 35, start: 20 });
    expect(signalFor(subtype(4, 4))).toEqual({ signal: 'constant', value: 4 });
    expect(signalFor(subtype(0, 1, { data_restriction_regex: 'on|off' }))).toMatch(/pattern on\|off/);
  });

  it('makes sensors, actuators of the ids asked for, and lists what it skipped', () => {
    const plan = planFor(
      [resource(1, subtype(0, 100)), resource(2, subtype(0, 1)), resource(3, subtype(0, 1, { data_restriction_regex: '[a-z]+' }))],
      [2],
    );
    expect(plan.sensors.map((s) => s.resource)).toEqual([1]);
    expect(plan.actuators.map((a) => a.resource)).toEqual([2]);
    expect(plan.refused).toEqual([]);
    expect(plan.skipped).toEqual([{ resource: 3, name: 'R3', reason: expect.stringMatching(/no signal is chosen for a pattern/) }]);
  });
});

describe("refused readings: a configured signal against its resource's subtype", () => {
  const onOff = subtype(0, 1, { data_restriction_regex: 'on|off' });
  it('takes a signal inside the range, or values that match the pattern', () => {
    expect(refusedReadings(spec('sine', { min: 18, max: 26 }), 1000, subtype(-40, 125))).toBeNull();
    expect(refusedReadings(spec('square', {}), 1000, subtype(0, 1))).toBeNull();
    expect(refusedReadings(spec('constant', { value: 'on' }), 1000, onOff)).toBeNull();
    expect(refusedReadings(spec('random-walk', { min: -5, max: 5 }), 1000, subtype(0, 1, { data_restriction_regex: '-?[0-9.]+' }))).toBeNull();
    // A count that would take more than a day to outgrow its range.
    expect(refusedReadings(spec('counter', {}), 1000, subtype(0, 2147483647))).toBeNull();
  });

  it('names every reading, or which ones, and why', () => {
    expect(refusedReadings(spec('sine', { min: 130, max: 200 }), 1000, subtype(-40, 125))).toEqual({
      all: true,
      reason: "every reading: the signal's 130..200 lies outside the resource's -40..125",
    });
    expect(refusedReadings(spec('random', { min: -50, max: 150 }), 1000, subtype(0, 100))).toEqual({
      all: false,
      reason: "those below 0 and those above 100: the signal's -50..150 goes beyond the resource's 0..100",
    });
    expect(refusedReadings(spec('counter', {}), 1000, subtype(0, 100))).toEqual({
      all: false,
      reason: "those above 100, after 101 s: a count from 0 against the resource's 0..100",
    });
    expect(refusedReadings(spec('counter', { start: 200 }), 1000, subtype(0, 100))?.all).toBe(true);
    expect(refusedReadings(spec('square', { low: 0, high: 2 }), 1000, subtype(0, 1))).toEqual({ all: false, reason: 'some readings: value 2 is outside [0, 1]' });
    expect(refusedReadings(spec('constant', { value: 'auto' }), 1000, onOff)?.all).toBe(true);
    expect(refusedReadings(spec('sine', { min: 0, max: 1 }), 1000, onOff)).toEqual({
      all: true,
      reason: 'every reading: its readings are numbers from 0 to 1, and the resource takes only text matching on|off',
    });
  });
});

describe('config file', () => {
  it('reads sensors with their signals, actuators, uplink and connection settings', () => {
    const config = parseSimConfig(
      JSON.stringify({
        url: 'http://127.0.0.1:8080',
        publicKey: 'KEY',
        token: 'TOKEN',
        resources: [9],
        sensors: [
          { resource: 77, every: 40, signal: 'counter' },
          { resource: 78, every: 500, signal: 'sine', min: 0, max: 1, periodMs: 2000 },
        ],
        actuators: [{ resource: 73, every: 2000 }],
        uplink: { batch: 10, flushMs: 100 },
      }),
    );
    expect(config).toEqual({
      url: 'http://127.0.0.1:8080',
      publicKey: 'KEY',
      token: 'TOKEN',
      resources: [9],
      sensors: [
        { resource: 77, name: '', every: 40, spec: { signal: 'counter', start: 0 } },
        { resource: 78, name: '', every: 500, spec: { signal: 'sine', min: 0, max: 1, periodMs: 2000, decimals: 2 } },
      ],
      actuators: [{ resource: 73, name: '', every: 2000 }],
      uplink: { batch: 10, flushMs: 100 },
    });
  });

  it('names every unknown key and every bad value at once, never quoting the token', () => {
    let error: unknown;
    try {
      parseSimConfig(
        JSON.stringify({
          token: 12345678,
          sensor: [],
          sensors: [{ resource: 0, every: 40, signal: 'saw' }, { resource: 5, signal: 'counter', colour: 'red' }],
          actuators: [{ resource: 73, every: 1, handler: 'x' }],
          uplink: { batch: '10', overflow: 'drop-newest' },
        }),
      );
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SimConfigError);
    expect((error as SimConfigError).problems).toEqual([
      'sensor: unknown key',
      'token: expected a non-empty string',
      'sensors[0].resource: expected a positive integer, got 0',
      'sensors[0].signal: expected one of constant, counter, sine, square, random, random-walk, got "saw"',
      'sensors[1].every: required',
      'sensors[1].colour: unknown key for the counter signal',
      'actuators[0].handler: unknown key',
      'uplink.overflow: unknown key',
      'uplink.batch: expected a number, got "10"',
    ]);
    expect((error as Error).message).not.toContain('12345678');
  });

  it('refuses text that is not a JSON object', () => {
    expect(() => parseSimConfig('{"sensors": [')).toThrow(/^not JSON at line 1, column 14: the text ends too soon$/);
    // Where, never a quote of the text: a token left unquoted stays unprinted.
    expect(() => parseSimConfig('{"url": "http://127.0.0.1:8080",\n "token": SECRET1234}')).toThrow(/^not JSON at line 2, column 11: expected a value after the property name: [^S]*$/);
    expect(() => parseSimConfig('[]')).toThrow(/JSON object/);
  });
});
