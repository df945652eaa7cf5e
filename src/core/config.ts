// The agent's configuration: its types, its defaults, and one check that lists every problem at once.
import type { SampleValue } from './host/host';
import type { OverflowPolicy } from './queue/queue';
import type { Feed } from './wire/wire';
import { LIMITS } from './wire/wire';

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
  /**
   * How long `handle` may take (ms, default 30 s). A handler that has not settled by then is reported,
   * counted in `commandErrors` and no longer awaited: the actuator's next command, which waited for it,
   * runs (docs/architecture.md, "Commands and presence").
   */
  timeoutMs?: number;
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
  overflow: OverflowPolicy;
  /** Bytes of the pool that holds queued string samples. */
  stringBytes: number;
  /** Per-request timeout, enforced by the host adapter. */
  timeoutMs: number;
  /** Backoff after a failure: a delay drawn from [c/2, c), c = min(cap, base·2^attempt) (backoff.ts). */
  backoffBaseMs: number;
  backoffCapMs: number;
  /** While the token is refused (401/403), sending is retried this rarely. */
  authRetryMs: number;
  /** The first flush after start waits a random part of this, so a fleet that reboots together spreads out. */
  startJitterMs: number;
  /**
   * After a request whose outcome is unknown (a timeout, a reset, a garbled answer: the service may have
   * stored the batch), read the batch's resources back (operation 6) and send the batch again only if it
   * was not stored (docs/architecture.md, "Reconciliation"). Default true; false sends it again unread,
   * which may store it twice.
   */
  reconcile: boolean;
  /**
   * After a timeout, how long the read-back waits, so that the service has finished a request it may
   * still be executing: a server can go on with a request whose client gave up, and the interface does not
   * say for how long. Default: the request's own `timeoutMs`, at most 2.5 s (`settleMs`). After a reset
   * or a garbled answer the service has finished, and the read-back goes at once. A batch the service
   * stores later than this can be stored twice, never lost. flush() and stop() do not wait for it: they
   * read back at once, and what that cannot decide goes again, counted unresolved.
   */
  reconcileAfterMs?: number;
  /**
   * Each element of operation 4 carries its sample's age (`"age_ms"`), so that a backlog delivered after
   * an outage is stored at the times it was sampled. Our extension of the interface (docs/interface.md):
   * the local service takes it; a platform that does not know the field may refuse it, so it is off by
   * default.
   */
  sendAge: boolean;
}

/**
 * Report by exception for one resource (src/core/intake/report.ts): which of its samples are queued. Without a
 * rule every sample is. A number is reported when it moved at least `deadband` (or `deadbandPercent` of its
 * subtype's range, whichever is larger) from the last one reported; 0 reports any change; without either,
 * every sample counts as changed and only `minIntervalMs` thins them. A boolean or a string is reported
 * when it differs. No two reports come closer than `minIntervalMs` (a change within it waits, and the newest
 * value goes at its end); after `heartbeatMs` without a report, the last value goes again, stamped now. With
 * `aggregate`, a report carries the mean, min or max of the numbers since the last report.
 */
export interface ReportConfig {
  resource: number;
  deadband?: number;
  deadbandPercent?: number;
  minIntervalMs?: number;
  heartbeatMs?: number;
  aggregate?: 'mean' | 'min' | 'max';
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
  /** Report by exception, per resource (at most one rule each, for a configured resource). Default: every sample is queued. */
  reporting?: ReportConfig[];
  uplink?: Partial<UplinkConfig>;
  /**
   * When nothing non-silent has reached the service for this long, the agent makes a non-silent read so
   * the resources stay alive. Default: half of the shortest `lifetime` among its resources, else 5 min.
   */
  presenceMs?: number;
  /**
   * The longest wait between tries of the start-up lookup of the resources while the service is
   * unreachable: they back off from `uplink.backoffBaseMs` up to this. Default 30 s.
   */
  lookupRetryMs?: number;
  /**
   * start() does not reject when the service refuses the token: the agent starts, keeps every sample it
   * accepts, and tries again as it does when the token is refused later (`uplink.authRetryMs`). For a
   * program serving many devices (the gateway), where one refused token must not keep a device's
   * readings out. Default false.
   */
  holdOnRefusedToken?: boolean;
  /** Seeds the agent's jitter; tests fix it, devices leave it out. */
  seed?: number;
  onSetAside?: (item: SetAside) => void;
}

// Frozen, as every table of the core: a preloaded object that is not costs a RAM pointer on a Moddable
// build (the XS linker warns "not frozen").
export const UPLINK_DEFAULTS: Readonly<UplinkConfig> = Object.freeze({
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
  reconcile: true,
  sendAge: false,
});

/** The default `reconcileAfterMs`: the request's timeout, at most this. */
export const MAX_SETTLE_MS = 2_500;

/** How long after a timeout a read-back can rule out that the service still stores the batch. */
export function settleMs(s: UplinkConfig): number {
  return s.reconcileAfterMs ?? Math.min(s.timeoutMs, MAX_SETTLE_MS);
}

export const DEFAULT_PRESENCE_MS = 300_000;
export const DEFAULT_HANDLER_TIMEOUT_MS = 30_000;
export const DEFAULT_LOOKUP_RETRY_MS = 30_000;

/** Thrown by `checkConfig`: `problems` has one line per problem, and the message lists them all. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super('invalid agent config: ' + problems.join('; '));
  }

  // Not `this.name = …`: that assignment throws where Error.prototype is frozen (see FeedError).
  override get name(): string {
    return 'ConfigError';
  }
}

type Check = (value: unknown) => string | null;

// The checks' closures hold consts, not parameters: on a Moddable build a closure over a parameter
// costs a RAM pointer (the XS linker warns "no const"); over a const it stays in flash.

/** A check that `ok` holds for a value that is present; a missing one is for `required` to judge. */
const expect = (what: string, ok: (v: unknown) => boolean): Check => {
  const expected = 'expected ' + what + ', got ', test = ok;
  return (v) => (v === undefined || test(v) ? null : expected + describe(v));
};
const required = (check: Check): Check => {
  const present = check;
  return (v) => (v === undefined ? 'required' : present(v));
};

/** An http:// or https:// base URL: a host, maybe a port and a path, no query or fragment. */
export const isServiceUrl = (v: unknown): boolean => typeof v === 'string' && /^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/.test(v);
const isPositiveInteger = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) > 0;
const positiveInteger = expect('a positive integer', isPositiveInteger);
const period = expect('a number of ms ≥ 1', (v) => typeof v === 'number' && v >= 1 && v < Infinity);
const boolean = expect('a boolean', (v) => typeof v === 'boolean');
const fn = expect('a function', (v) => typeof v === 'function');
const nonNegative = expect('a number ≥ 0', (v) => typeof v === 'number' && v >= 0 && v < Infinity);
const nonEmptyString = expect('a non-empty string', (v) => typeof v === 'string' && v !== '');
/** sensors, actuators and uplink: checked on their own, after the rest. */
const apart = (): null => null;

const TOP: Record<string, Check> = Object.freeze({
  url: required(expect('an http:// or https:// URL', isServiceUrl)),
  publicKey: required(nonEmptyString),
  // The token's value is a secret: say what is wrong with it without quoting it.
  token: required((v) => (nonEmptyString(v) === null ? null : 'expected a non-empty string')),
  sensors: apart,
  actuators: apart,
  resources: (v) => {
    if (v === undefined) return null;
    if (!Array.isArray(v)) return 'expected an array of resource ids, got ' + describe(v);
    const bad = v.findIndex((id) => !isPositiveInteger(id));
    return bad < 0 ? null : 'element ' + bad + ': expected a positive integer, got ' + describe(v[bad]);
  },
  uplink: apart,
  reporting: apart,
  presenceMs: period,
  lookupRetryMs: period,
  holdOnRefusedToken: boolean,
  seed: expect('a number', (v) => typeof v === 'number' && isFinite(v)),
  onSetAside: fn,
});
const SENSOR: Record<string, Check> = Object.freeze({ resource: required(positiveInteger), every: required(period), read: required(fn) });
const ACTUATOR: Record<string, Check> = Object.freeze({
  resource: required(positiveInteger),
  every: required(period),
  handle: required(fn),
  applyCurrent: boolean,
  timeoutMs: period,
});
const REPORT: Record<keyof ReportConfig, Check> = Object.freeze({
  resource: required(positiveInteger),
  deadband: nonNegative,
  deadbandPercent: expect('a number in [0, 100]', (v) => typeof v === 'number' && v >= 0 && v <= 100),
  minIntervalMs: nonNegative,
  heartbeatMs: period,
  aggregate: expect('"mean", "min" or "max"', (v) => v === 'mean' || v === 'min' || v === 'max'),
});
const UPLINK: Record<keyof UplinkConfig, Check> = Object.freeze({
  batch: (v) => positiveInteger(v) ?? ((v as number) > LIMITS.maxBatchElements ? 'expected at most ' + LIMITS.maxBatchElements + ', got ' + v : null),
  flushMs: period,
  maxLatencyMs: period,
  queue: positiveInteger,
  overflow: expect('"drop-oldest" or "drop-newest"', (v) => v === 'drop-oldest' || v === 'drop-newest'),
  stringBytes: expect('an integer ≥ 0', (v) => Number.isSafeInteger(v) && (v as number) >= 0),
  timeoutMs: period,
  backoffBaseMs: period,
  backoffCapMs: period,
  authRetryMs: period,
  startJitterMs: nonNegative,
  reconcile: boolean,
  reconcileAfterMs: nonNegative,
  sendAge: boolean,
});

/** Checks a configuration; throws one ConfigError that names every problem. The token is never quoted. */
export function checkConfig(config: unknown): AgentConfig {
  if (!isRecord(config)) throw new ConfigError(['config: expected an object, got ' + describe(config)]);
  const problems: string[] = [];
  checkFields(config, '', TOP, problems);
  checkList(config.sensors, 'sensors', SENSOR, problems);
  checkList(config.actuators, 'actuators', ACTUATOR, problems);
  checkList(config.reporting, 'reporting', REPORT, problems);
  checkRules(config, problems);
  if (config.uplink !== undefined) checkObject(config.uplink, 'uplink', UPLINK, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return config as unknown as AgentConfig;
}

/**
 * The problems of one report-by-exception rule's settings (its fields but `resource`), each prefixed with
 * `prefix`: for the files that carry rules per resource (the simulator's and the gateway's configs).
 */
export function reportProblems(settings: unknown, prefix: string): string[] {
  const problems: string[] = [];
  const { resource: _resource, ...fields } = REPORT;
  checkObject(settings, prefix.replace(/\.$/, ''), fields, problems);
  return problems;
}

/** Each report rule names a configured resource, once. */
function checkRules(config: Record<string, unknown>, problems: string[]): void {
  if (!Array.isArray(config.reporting)) return;
  const ids = new Set<unknown>();
  for (const list of [config.sensors, config.actuators]) if (Array.isArray(list)) for (const x of list) if (isRecord(x)) ids.add(x.resource);
  if (Array.isArray(config.resources)) for (const id of config.resources) ids.add(id);
  const seen = new Set<unknown>();
  config.reporting.forEach((rule: unknown, i: number) => {
    if (!isRecord(rule) || rule.resource === undefined) return;
    if (!ids.has(rule.resource)) problems.push('reporting[' + i + '].resource: ' + String(rule.resource) + ' is not a configured resource (a sensor, an actuator or `resources`)');
    else if (seen.has(rule.resource)) problems.push('reporting[' + i + '].resource: ' + String(rule.resource) + ' has a rule already');
    seen.add(rule.resource);
  });
}

/** The uplink settings with defaults filled in (after `checkConfig`). */
export function uplinkSettings(config: AgentConfig): UplinkConfig {
  return { ...UPLINK_DEFAULTS, ...config.uplink };
}

function checkList(list: unknown, name: string, fields: Record<string, Check>, problems: string[]): void {
  if (list !== undefined && !Array.isArray(list)) problems.push(name + ': expected an array, got ' + describe(list));
  else list?.forEach((item: unknown, i: number) => checkObject(item, name + '[' + i + ']', fields, problems));
}

function checkObject(v: unknown, name: string, fields: Record<string, Check>, problems: string[]): void {
  if (isRecord(v)) checkFields(v, name + '.', fields, problems);
  else problems.push(name + ': expected an object, got ' + describe(v));
}

/** Keys that were renamed, with their new names: a configuration that still uses one is told so. */
const RENAMED: Readonly<Record<string, string>> = Object.freeze({ keepAliveMs: 'presenceMs' });

function checkFields(record: Record<string, unknown>, prefix: string, fields: Record<string, Check>, problems: string[]): void {
  for (const key of Object.keys(record)) {
    if (!(key in fields)) problems.push(prefix + key + (prefix === '' && key in RENAMED ? ': renamed ' + RENAMED[key] : ': unknown key'));
  }
  for (const key in fields) {
    const problem = fields[key](record[key]);
    if (problem !== null) problems.push(prefix + key + ': ' + problem);
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
