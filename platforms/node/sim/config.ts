// The simulator's config file (JSON): connection settings, sensors with their signals, actuators, uplink
// settings. The check lists every problem at once and names each unknown key; the token is never quoted.
import type { UplinkConfig } from '../../../src/core/config';
import { reportProblems } from '../../../src/core/config';
import { JsonTextError, parseJsonText } from '../../../src/service/json-text';
import type { ActuatorPlan, Report, SensorPlan } from './plan';
import { show, SIGNAL_NAMES, signalSpec } from './signals';
import type { SignalName } from './signals';

/** The uplink settings a config file may set; the agent checks their ranges. */
export type SimUplink = Partial<
  Pick<UplinkConfig, 'batch' | 'flushMs' | 'maxLatencyMs' | 'queue' | 'timeoutMs' | 'backoffBaseMs' | 'backoffCapMs' | 'authRetryMs' | 'reconcileAfterMs' | 'sendAge'>
>;

export interface SimConfig {
  url?: string;
  publicKey?: string;
  token?: string;
  /** Resources to feed with a signal chosen from their subtype, as without a config. */
  resources: number[];
  sensors: SensorPlan[];
  actuators: ActuatorPlan[];
  uplink: SimUplink;
}

export class SimConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('; '));
    this.name = 'SimConfigError';
  }
}

const TOP = ['url', 'publicKey', 'token', 'resources', 'sensors', 'actuators', 'uplink'];
const UPLINK_NUMBERS = ['batch', 'flushMs', 'maxLatencyMs', 'queue', 'timeoutMs', 'backoffBaseMs', 'backoffCapMs', 'authRetryMs', 'reconcileAfterMs'] as const;
const UPLINK_KEYS = [...UPLINK_NUMBERS, 'sendAge'];

/** Parses and checks a config file's text; throws SimConfigError listing every problem. */
export function parseSimConfig(text: string): SimConfig {
  let data: unknown;
  try {
    data = parseJsonText(text);
  } catch (e) {
    throw e instanceof JsonTextError ? new SimConfigError([e.message]) : e;
  }
  return checkSimConfig(data);
}

/** Checks a config file's value; throws SimConfigError listing every problem. */
export function checkSimConfig(data: unknown): SimConfig {
  if (!isRecord(data)) throw new SimConfigError(['expected a JSON object at the top']);
  const problems: string[] = [];
  unknownKeys(data, TOP, '', problems);
  const config: SimConfig = { resources: [], sensors: [], actuators: [], uplink: {} };
  for (const key of ['url', 'publicKey', 'token'] as const) {
    const v = data[key];
    if (v === undefined) continue;
    if (typeof v === 'string' && v !== '') config[key] = v;
    else problems.push(key + ': expected a non-empty string' + (key === 'token' ? '' : ', got ' + show(v)));
  }
  if (data.resources !== undefined) {
    if (!Array.isArray(data.resources)) problems.push('resources: expected an array of resource ids, got ' + show(data.resources));
    else data.resources.forEach((id, i) => (isId(id) ? config.resources.push(id) : problems.push(`resources[${i}]: expected a positive integer, got ${show(id)}`)));
  }
  eachEntry(data.sensors, 'sensors', problems, (entry, prefix) => {
    const { resource, every, signal, report, ...params } = entry;
    const base = common(resource, every, prefix, problems);
    const reportIssues = report === undefined ? [] : reportProblems(report, prefix + 'report.');
    problems.push(...reportIssues);
    if (typeof signal !== 'string' || !(SIGNAL_NAMES as string[]).includes(signal)) {
      problems.push(prefix + 'signal: ' + (signal === undefined ? 'required' : 'expected one of ' + SIGNAL_NAMES.join(', ') + ', got ' + show(signal)));
      return;
    }
    const spec = signalSpec(signal as SignalName, params, prefix, problems);
    if (base !== null && spec !== null && reportIssues.length === 0) {
      config.sensors.push({ ...base, name: '', spec, ...(report === undefined ? {} : { report: report as Report }) });
    }
  });
  eachEntry(data.actuators, 'actuators', problems, (entry, prefix) => {
    unknownKeys(entry, ['resource', 'every'], prefix, problems);
    const base = common(entry.resource, entry.every, prefix, problems);
    if (base !== null) config.actuators.push({ ...base, name: '' });
  });
  if (data.uplink !== undefined) {
    if (!isRecord(data.uplink)) problems.push('uplink: expected an object, got ' + show(data.uplink));
    else {
      unknownKeys(data.uplink, UPLINK_KEYS, 'uplink.', problems);
      for (const key of UPLINK_NUMBERS) {
        const v = data.uplink[key];
        if (v === undefined) continue;
        if (typeof v === 'number') config.uplink[key] = v;
        else problems.push('uplink.' + key + ': expected a number, got ' + show(v));
      }
      const sendAge = data.uplink.sendAge;
      if (typeof sendAge === 'boolean') config.uplink.sendAge = sendAge;
      else if (sendAge !== undefined) problems.push('uplink.sendAge: expected true or false, got ' + show(sendAge));
    }
  }
  if (problems.length > 0) throw new SimConfigError(problems);
  return config;
}

function eachEntry(list: unknown, name: string, problems: string[], visit: (entry: Record<string, unknown>, prefix: string) => void): void {
  if (list === undefined) return;
  if (!Array.isArray(list)) {
    problems.push(name + ': expected an array, got ' + show(list));
    return;
  }
  list.forEach((entry, i) => {
    if (isRecord(entry)) visit(entry, `${name}[${i}].`);
    else problems.push(`${name}[${i}]: expected an object, got ${show(entry)}`);
  });
}

/** `resource` and `every`, the two fields every sensor and actuator has. */
function common(resource: unknown, every: unknown, prefix: string, problems: string[]): { resource: number; every: number } | null {
  const before = problems.length;
  if (resource === undefined) problems.push(prefix + 'resource: required');
  else if (!isId(resource)) problems.push(prefix + 'resource: expected a positive integer, got ' + show(resource));
  if (every === undefined) problems.push(prefix + 'every: required');
  else if (!(typeof every === 'number' && isFinite(every) && every >= 1)) problems.push(prefix + 'every: expected a number of ms ≥ 1, got ' + show(every));
  return problems.length > before ? null : { resource: resource as number, every: every as number };
}

function unknownKeys(record: Record<string, unknown>, known: string[], prefix: string, problems: string[]): void {
  for (const key of Object.keys(record)) if (!known.includes(key)) problems.push(prefix + key + ': unknown key');
}

function isId(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
