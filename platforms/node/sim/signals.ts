// The simulator's six signals: small generators of readings, each with its parameters, their defaults and
// their checks in one table, so the config check, the plan and the docs agree on one list.
import type { SampleValue } from '../../../src/core/host/host';

export type SignalSpec =
  | { signal: 'constant'; value: SampleValue }
  | { signal: 'counter'; start: number }
  | { signal: 'sine'; min: number; max: number; periodMs: number; decimals: number }
  | { signal: 'square'; low: number; high: number; periodMs: number }
  | { signal: 'random'; min: number; max: number; decimals: number }
  | { signal: 'random-walk'; start: number; step: number; min: number; max: number; decimals: number };

export type SignalName = SignalSpec['signal'];

/** One reading per call. */
export type Signal = () => SampleValue;

export interface SignalEnv {
  /** Monotonic ms; periodic signals start their period at the first reading. */
  now: () => number;
  /** Uniform in [0, 1). */
  random: () => number;
}

type Check = (v: unknown) => string | null;

const finite: Check = (v) => (typeof v === 'number' && isFinite(v) ? null : 'expected a number, got ' + show(v));
const period: Check = (v) => (typeof v === 'number' && isFinite(v) && v >= 1 ? null : 'expected a number of ms ≥ 1, got ' + show(v));
const integer: Check = (v) => (typeof v === 'number' && Number.isSafeInteger(v) ? null : 'expected an integer, got ' + show(v));
const nonNegative: Check = (v) => (typeof v === 'number' && isFinite(v) && v >= 0 ? null : 'expected a number ≥ 0, got ' + show(v));
const decimals: Check = (v) =>
  typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 10 ? null : 'expected an integer from 0 to 10, got ' + show(v);
const value: Check = (v) =>
  (typeof v === 'number' && isFinite(v)) || typeof v === 'boolean' || typeof v === 'string' ? null : 'expected a number, boolean or string, got ' + show(v);

interface Param {
  check: Check;
  /** Absent: the parameter is required. A function: derived from the others (after they were checked). */
  fallback?: number | ((p: Record<string, number>) => number);
}

const DECIMALS: Param = { check: decimals, fallback: 2 };

/** Every signal's parameters. The docs (docs/simulator.md) describe this table. */
const SIGNAL_PARAMS: Record<SignalName, Record<string, Param>> = {
  constant: { value: { check: value } },
  counter: { start: { check: integer, fallback: 0 } },
  sine: { min: { check: finite }, max: { check: finite }, periodMs: { check: period, fallback: 60_000 }, decimals: DECIMALS },
  square: { low: { check: finite, fallback: 0 }, high: { check: finite, fallback: 1 }, periodMs: { check: period, fallback: 10_000 } },
  random: { min: { check: finite }, max: { check: finite }, decimals: DECIMALS },
  'random-walk': {
    min: { check: finite },
    max: { check: finite },
    start: { check: finite, fallback: (p) => (p.min + p.max) / 2 },
    step: { check: nonNegative, fallback: (p) => (p.max - p.min) / 20 },
    decimals: DECIMALS,
  },
};

export const SIGNAL_NAMES = Object.keys(SIGNAL_PARAMS) as SignalName[];

/**
 * Checks a signal's parameters (every key of `params` but `signal`) and fills in the defaults. Pushes one
 * line per problem, each starting with `prefix`; returns null when there was one.
 */
export function signalSpec(name: SignalName, params: Record<string, unknown>, prefix: string, problems: string[]): SignalSpec | null {
  const table = SIGNAL_PARAMS[name];
  const before = problems.length;
  const out: Record<string, unknown> = { signal: name };
  for (const key of Object.keys(params)) {
    if (!Object.hasOwn(table, key)) problems.push(prefix + key + ': unknown key for the ' + name + ' signal');
  }
  for (const [key, param] of Object.entries(table)) {
    const given = params[key];
    if (given === undefined) {
      if (param.fallback === undefined) problems.push(prefix + key + ': required by the ' + name + ' signal');
      continue;
    }
    const problem = param.check(given);
    if (problem === null) out[key] = given;
    else problems.push(prefix + key + ': ' + problem);
  }
  if (problems.length > before) return null;
  for (const [key, param] of Object.entries(table)) {
    if (out[key] === undefined) out[key] = typeof param.fallback === 'function' ? param.fallback(out as Record<string, number>) : param.fallback;
  }
  const spec = out as SignalSpec;
  const range = rangeOf(spec);
  if (range !== null && range[0] > range[1]) problems.push(prefix + 'min: must not be above max (' + range[0] + ' > ' + range[1] + ')');
  if (spec.signal === 'random-walk' && (spec.start < spec.min || spec.start > spec.max)) {
    problems.push(prefix + 'start: must lie within [min, max], got ' + spec.start);
  }
  return problems.length > before ? null : spec;
}

function rangeOf(spec: SignalSpec): [number, number] | null {
  return spec.signal === 'sine' || spec.signal === 'random' || spec.signal === 'random-walk' ? [spec.min, spec.max] : null;
}

export function createSignal(spec: SignalSpec, env: SignalEnv): Signal {
  switch (spec.signal) {
    case 'constant':
      return () => spec.value;
    case 'counter': {
      let next = spec.start;
      return () => next++;
    }
    case 'sine': {
      const mid = (spec.min + spec.max) / 2;
      const amplitude = (spec.max - spec.min) / 2;
      const phase = since(env.now);
      return () => fit(mid + amplitude * Math.sin((2 * Math.PI * phase()) / spec.periodMs), spec.min, spec.max, spec.decimals);
    }
    case 'square': {
      const phase = since(env.now);
      return () => (phase() % spec.periodMs < spec.periodMs / 2 ? spec.high : spec.low);
    }
    case 'random':
      return () => fit(spec.min + env.random() * (spec.max - spec.min), spec.min, spec.max, spec.decimals);
    case 'random-walk': {
      let x = spec.start;
      return () => {
        const current = fit(x, spec.min, spec.max, spec.decimals);
        // Bounce off the edges rather than stick to them.
        x += (env.random() * 2 - 1) * spec.step;
        if (x > spec.max) x = Math.max(spec.min, 2 * spec.max - x);
        if (x < spec.min) x = Math.min(spec.max, 2 * spec.min - x);
        return current;
      };
    }
  }
}

/** One phrase for the start-up listing, e.g. `sine 16..28, period 120 s`. */
export function describeSignal(spec: SignalSpec): string {
  switch (spec.signal) {
    case 'constant':
      return 'constant ' + JSON.stringify(spec.value);
    case 'counter':
      return 'counter from ' + spec.start;
    case 'sine':
      return `sine ${spec.min}..${spec.max}, period ${spec.periodMs / 1000} s`;
    case 'square':
      return `square ${spec.low}/${spec.high}, period ${spec.periodMs / 1000} s`;
    case 'random':
      return `random ${spec.min}..${spec.max}`;
    case 'random-walk':
      return `random walk ${spec.min}..${spec.max} from ${spec.start}, step ${spec.step}`;
  }
}

/** Milliseconds since the first call. */
function since(now: () => number): () => number {
  let t0 = -1;
  return () => {
    const t = now();
    if (t0 < 0) t0 = t;
    return t - t0;
  };
}

/** Rounded to `decimals`, then kept inside [min, max] (rounding may step past a bound with more decimals). */
function fit(x: number, min: number, max: number, decimals: number): number {
  const scale = 10 ** decimals;
  return Math.min(max, Math.max(min, Math.round(x * scale) / scale));
}

/** A value as a problem line quotes it, cut short. */
export function show(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v);
  if (v === null || typeof v === 'number' || typeof v === 'boolean') return String(v);
  return Array.isArray(v) ? 'an array' : 'a ' + typeof v;
}
