// The agent's configuration: its types, its defaults, and one check that lists every problem at once.
import type { SampleValue } from './host';
import type { Overflow } from './queue';
import type { Feed } from './wire';
import { LIMITS } from './wire';

export interface SensorConfig {
  resource: number;
  /** Sampling period in ms. */
  every: number;
  /** A reading: a number, boolean or string, or a promise of one. It may throw; the agent counts it. */
  read: () => SampleValue | Promise<SampleValue>;
}

export interface ActuatorConfig {
  resource: number;
  /** Polling period in ms (operation 6). */
  every: number;
  /** Runs once for each new feed of the resource, with its value parsed for the resource's subtype. */
  handle: (value: SampleValue, feed: Feed) => void | Promise<void>;
  /**
   * Whether the feed that is already last when the agent starts counts as a command. Default false:
   * a command such as "reboot" must not run again on every boot.
   */
  applyCurrent?: boolean;
}

export interface UplinkConfig {
  /** Most elements in one operation-4 request (the service takes at most 1,000). */
  batch: number;
  /** A flush is attempted at least this often while samples are queued. */
  flushMs: number;
  /** A sample waits at most about this long before a flush is attempted. */
  maxLatencyMs: number;
  /** Queue capacity in samples, fixed at start. */
  queue: number;
  overflow: Overflow;
  /** Bytes of the pool that holds queued string samples. */
  stringBytes: number;
  /** Per-request timeout, enforced by the host adapter. */
  timeoutMs: number;
  /** Backoff after a transient failure: a delay drawn from [0, min(cap, base·2^attempt)). */
  backoffBaseMs: number;
  backoffCapMs: number;
  /** While the token is refused (401/403), sending is retried this rarely. */
  authRetryMs: number;
  /** The first flush after start waits a random part of this, so a fleet that reboots together spreads out. */
  startJitterMs: number;
}

/** A sample the service refused; the agent set it aside and the rest flowed on. */
export interface SetAside {
  resource: number;
  value: SampleValue;
  reason: string;
}

export interface AgentConfig {
  /** Base URL of the service, e.g. `https://host` or `http://127.0.0.1:8080`. */
  url: string;
  publicKey: string;
  /** The device's access token. It never appears in a log, an error or `stats()`. */
  token: string;
  sensors?: SensorConfig[];
  actuators?: ActuatorConfig[];
  /** Further resource ids whose readings are queued by hand with `record()`. */
  resources?: number[];
  uplink?: Partial<UplinkConfig>;
  /**
   * When nothing non-silent has reached the service for this long, the agent makes a non-silent read so
   * the resources stay alive. Default: half of the shortest `lifetime` among its resources, else 5 min.
   */
  keepAliveMs?: number;
  /** How often the start-up lookup of the resources is retried while the service is unreachable. */
  lookupRetryMs?: number;
  /** Seeds the agent's jitter; tests fix it, devices leave it out. */
  seed?: number;
  onSetAside?: (item: SetAside) => void;
}

export const UPLINK_DEFAULTS: UplinkConfig = {
  batch: 100,
  flushMs: 10_000,
  maxLatencyMs: 30_000,
  queue: 1024,
  overflow: 'drop-oldest',
  stringBytes: 2048,
  timeoutMs: 10_000,
  backoffBaseMs: 1_000,
  backoffCapMs: 120_000,
  authRetryMs: 300_000,
  startJitterMs: 5_000,
};

export const DEFAULT_KEEP_ALIVE_MS = 300_000;
export const DEFAULT_LOOKUP_RETRY_MS = 30_000;

/** Thrown by `checkConfig`: `problems` has one line per problem, and the message lists them all. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super('invalid agent config: ' + problems.join('; '));
    this.name = 'ConfigError';
  }
}

type Check = (value: unknown) => string | null;

const positiveInteger: Check = (v) =>
  typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? null : 'expected a positive integer, got ' + describe(v);
const period: Check = (v) =>
  typeof v === 'number' && isFinite(v) && v >= 1 ? null : 'expected a number of ms ≥ 1, got ' + describe(v);
const nonNegative: Check = (v) =>
  typeof v === 'number' && isFinite(v) && v >= 0 ? null : 'expected a number ≥ 0, got ' + describe(v);
const nonEmptyString: Check = (v) => (typeof v === 'string' && v !== '' ? null : 'expected a non-empty string, got ' + describe(v));
const fn: Check = (v) => (typeof v === 'function' ? null : 'expected a function, got ' + describe(v));
const bool: Check = (v) => (typeof v === 'boolean' ? null : 'expected a boolean, got ' + describe(v));
const httpUrl: Check = (v) =>
  typeof v === 'string' && /^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/.test(v) ? null : 'expected an http:// or https:// URL, got ' + describe(v);
const overflow: Check = (v) =>
  v === 'drop-oldest' || v === 'drop-newest' ? null : 'expected "drop-oldest" or "drop-newest", got ' + describe(v);
const batchSize: Check = (v) =>
  positiveInteger(v) ?? ((v as number) <= LIMITS.maxBatchElements ? null : 'expected at most ' + LIMITS.maxBatchElements + ', got ' + String(v));

const TOP: Record<string, { check: Check | null; required: boolean }> = {
  url: { check: httpUrl, required: true },
  publicKey: { check: nonEmptyString, required: true },
  token: { check: nonEmptyString, required: true },
  sensors: { check: null, required: false },
  actuators: { check: null, required: false },
  resources: {
    check: (v) => {
      if (!Array.isArray(v)) return 'expected an array of resource ids, got ' + describe(v);
      const bad = v.findIndex((id) => positiveInteger(id) !== null);
      return bad < 0 ? null : 'element ' + bad + ': ' + positiveInteger(v[bad]);
    },
    required: false,
  },
  uplink: { check: null, required: false },
  keepAliveMs: { check: period, required: false },
  lookupRetryMs: { check: period, required: false },
  seed: { check: (v) => (typeof v === 'number' && isFinite(v) ? null : 'expected a number, got ' + describe(v)), required: false },
  onSetAside: { check: fn, required: false },
};
const SENSOR: Record<string, { check: Check; required: boolean }> = {
  resource: { check: positiveInteger, required: true },
  every: { check: period, required: true },
  read: { check: fn, required: true },
};
const ACTUATOR: Record<string, { check: Check; required: boolean }> = {
  resource: { check: positiveInteger, required: true },
  every: { check: period, required: true },
  handle: { check: fn, required: true },
  applyCurrent: { check: bool, required: false },
};
const UPLINK: Record<keyof UplinkConfig, Check> = {
  batch: batchSize,
  flushMs: period,
  maxLatencyMs: period,
  queue: positiveInteger,
  overflow,
  stringBytes: (v) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? null : 'expected an integer ≥ 0, got ' + describe(v)),
  timeoutMs: period,
  backoffBaseMs: period,
  backoffCapMs: period,
  authRetryMs: period,
  startJitterMs: nonNegative,
};

/** Checks a configuration; throws one ConfigError that names every problem. The token is never quoted. */
export function checkConfig(config: unknown): AgentConfig {
  const problems: string[] = [];
  if (!isRecord(config)) throw new ConfigError(['config: expected an object, got ' + describe(config)]);
  checkFields(config, '', TOP, problems);
  checkList(config.sensors, 'sensors', SENSOR, problems);
  checkList(config.actuators, 'actuators', ACTUATOR, problems);
  if (config.uplink !== undefined) {
    if (!isRecord(config.uplink)) problems.push('uplink: expected an object, got ' + describe(config.uplink));
    else {
      const fields: Record<string, { check: Check; required: boolean }> = {};
      for (const key of Object.keys(UPLINK)) fields[key] = { check: UPLINK[key as keyof UplinkConfig], required: false };
      checkFields(config.uplink, 'uplink.', fields, problems);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config as unknown as AgentConfig;
}

/** The uplink settings with defaults filled in (after `checkConfig`). */
export function uplinkSettings(config: AgentConfig): UplinkConfig {
  return { ...UPLINK_DEFAULTS, ...config.uplink };
}

function checkList(list: unknown, name: string, fields: Record<string, { check: Check; required: boolean }>, problems: string[]): void {
  if (list === undefined) return;
  if (!Array.isArray(list)) {
    problems.push(name + ': expected an array, got ' + describe(list));
    return;
  }
  list.forEach((item, i) => {
    if (isRecord(item)) checkFields(item, name + '[' + i + '].', fields, problems);
    else problems.push(name + '[' + i + ']: expected an object, got ' + describe(item));
  });
}

function checkFields(
  record: Record<string, unknown>,
  prefix: string,
  fields: Record<string, { check: Check | null; required: boolean }>,
  problems: string[],
): void {
  for (const key of Object.keys(record)) {
    if (!(key in fields)) problems.push(prefix + key + ': unknown key');
  }
  for (const key of Object.keys(fields)) {
    const { check, required } = fields[key];
    const value = record[key];
    if (value === undefined) {
      if (required) problems.push(prefix + key + ': required');
      continue;
    }
    const problem = check === null ? null : check(value);
    // The token's value is a secret: say what is wrong with it without quoting it.
    if (problem !== null) problems.push(prefix + key + ': ' + (key === 'token' ? 'expected a non-empty string' : problem));
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return 'a ' + typeof v;
}
