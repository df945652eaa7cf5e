// The firmware's settings, read from `mc/config` (the manifest's `config`, and `key=value` on the
// mcconfig line, which arrive as strings). Every problem is named at once, in words a person who typed
// the build line can act on; the token's value is never repeated.

import { isServiceUrl, UPLINK_DEFAULTS } from '../../../src/core/config';
import { DEFAULT_MAX_BYTES, DEFAULT_SPILL_EVERY } from '../storage/flash-queue';

/** The resources the firmware feeds, by role: four sensors and the actuator that traces commands. */
const ROLES = Object.freeze(['uptime', 'heap', 'rssi', 'temperature', 'command'] as const);
type Role = (typeof ROLES)[number];

export interface Settings {
  url: string;
  publicKey: string;
  token: string;
  /** Resource id per role; a role left out is not fed. */
  resources: Partial<Record<Role, number>>;
  /** Sampling period of the sensors, ms (`every`, default 10 s). */
  every: number;
  /** How often the command resource is polled, ms (`commandEvery`, default 5 s). */
  commandEvery: number;
  /** Queue capacity in samples (`queue`, default 1,024). */
  queue: number;
  /** Once a flush failed, samples are written to flash every this many (`spillEvery`, default 64). */
  spillEvery: number;
  /** Bytes of the XS heap (`xsHeap`: the manifest sets it beside creation.static); 0 when unknown. */
  xsHeap: number;
  /** How often a status line is traced, ms (`statusEvery`, default 60 s; 0: never). */
  statusEvery: number;
  /**
   * The DER file of the CA that signed the server's chain, among the app's resources (`ca=my-ca.der`);
   * '' to find it among the SDK's certificates listed in the manifest (`$(MODULES)/crypt/data/caNNN`).
   */
  ca: string;
  /** Where the flash queue keeps what an outage left unsent (`backlogPath`, default the file root's feed-agent.q: files feed-agent.q.*). */
  backlogPath: string;
  /** The most flash the backlog takes, in bytes (`backlogBytes`, default 655,360: the manifest sets it per board). */
  backlogBytes: number;
  /**
   * Each sample goes with its age (`ages=1`: the agent's `uplink.sendAge`, our extension of operation 4,
   * docs/interface.md), so that a backlog delivered late is stored when it was sampled. Off by default: a
   * platform that does not know the field might refuse it.
   */
  ages: boolean;
  /**
   * How requests travel (`http`): 'keep-alive' (default), one connection kept open; 'classic', the SDK's
   * `Request`, a connection per request (platforms/moddable/host/host.ts).
   */
  http: 'keep-alive' | 'classic';
  /** Where the device asks for a new image (`update`, an http URL; provisioned or an mcconfig key); '' for none (ESP32 only). */
  update: string;
  /** This image's version (`version`): an update of another version is taken. */
  version: string;
  /** How often the update source is asked, ms (`updateEvery`, default 1 h). */
  updateEvery: number;
  /** How long a new image has to deliver a batch before it gives way to the one before it, ms (`updateTrial`, default 10 min). */
  updateTrial: number;
}

type SettingsResult = { settings: Settings; problems?: undefined } | { problems: string[] };

const DEFAULTS = Object.freeze({ every: 10_000, commandEvery: 5_000, queue: UPLINK_DEFAULTS.queue, spillEvery: DEFAULT_SPILL_EVERY, backlogBytes: DEFAULT_MAX_BYTES, xsHeap: 0, statusEvery: 60_000, updateEvery: 3_600_000, updateTrial: 600_000 });
/** Three blocks of 4 KB: the flash queue's least. */
const MIN_BACKLOG_BYTES = 12_288;

export function readSettings(config: Record<string, unknown>): SettingsResult {
  const problems: string[] = [];
  const text = (key: string, check: (v: string) => string | null, secret = false): string => {
    const value = config[key];
    if (value === undefined || value === '') {
      problems.push(key + ': missing (provision the device: feed-agent provision; or add ' + key + '=… to the mcconfig line)');
      return '';
    }
    const problem = typeof value === 'string' ? check(value) : 'expected text';
    if (problem !== null) problems.push(key + ': ' + problem + (secret ? '' : ', got "' + String(value) + '"'));
    return String(value);
  };
  const count = (key: keyof typeof DEFAULTS, least: number): number => {
    const value = config[key];
    if (value === undefined || value === '') return DEFAULTS[key];
    const n = Number(value);
    if (Number.isSafeInteger(n) && n >= least) return n;
    problems.push(key + ': expected a whole number ≥ ' + least + ', got "' + String(value) + '"');
    return DEFAULTS[key];
  };
  const url = text('url', (v) => (isServiceUrl(v) ? null : 'expected http(s)://host[:port][/path], without query or fragment'));
  const publicKey = text('publicKey', () => null);
  const token = text('token', () => null, true);
  // With a description of the hardware (`peripherals`), the board's roles are optional.
  const resources = readResources(config.resources, problems, config.peripherals === undefined);
  const ca = config.ca === undefined ? '' : String(config.ca);
  const root = (config.file as { root?: unknown } | undefined)?.root;
  const backlogPath = config.backlogPath !== undefined && config.backlogPath !== '' ? String(config.backlogPath) : String(root ?? '') + 'feed-agent.q';
  if (ca !== '' && !/\.der$/.test(ca)) problems.push('ca: expected the name of a .der resource, got "' + ca + '"');
  const http = config.http === undefined || config.http === '' ? 'keep-alive' : String(config.http);
  if (http !== 'keep-alive' && http !== 'classic') problems.push('http: expected keep-alive or classic, got "' + http + '"');
  const update = config.update === undefined ? '' : String(config.update);
  if (update !== '' && !/^http:\/\/[^/?#\s]+(\/[^?#\s]*)?$/.test(update)) problems.push('update: expected http://host[:port][/path], got "' + update + '"');
  const version = config.version === undefined || config.version === '' ? '0' : String(config.version);
  const ages = config.ages === undefined || config.ages === '' ? '0' : String(config.ages);
  if (ages !== '0' && ages !== '1') problems.push('ages: expected 0 or 1, got "' + ages + '"');
  const settings: Settings = {
    url,
    publicKey,
    token,
    resources,
    // The sampler skips ticks it missed rather than piling them up, so a short period only costs CPU.
    every: count('every', 50),
    commandEvery: count('commandEvery', 100),
    queue: count('queue', 1),
    spillEvery: count('spillEvery', 1),
    backlogBytes: count('backlogBytes', MIN_BACKLOG_BYTES),
    xsHeap: count('xsHeap', 0),
    statusEvery: count('statusEvery', 0),
    ca,
    backlogPath,
    ages: ages === '1',
    http: http as Settings['http'],
    update,
    version,
    updateEvery: count('updateEvery', 1000),
    updateTrial: count('updateTrial', 1000),
  };
  return problems.length > 0 ? { problems } : { settings };
}

/** `resources=uptime:201,heap:202,rssi:203,command:204`: a role and a resource id per pair. */
function readResources(value: unknown, problems: string[], required: boolean): Partial<Record<Role, number>> {
  const resources: Partial<Record<Role, number>> = {};
  const example = ' (e.g. resources=uptime:201,heap:202,rssi:203,command:204)';
  if (value === undefined || value === '') {
    if (required) problems.push('resources: missing' + example + ', or a description of the hardware (peripherals)');
    return resources;
  }
  const seen: number[] = [];
  for (const pair of String(value).split(',')) {
    const [role, id, extra] = pair.trim().split(':');
    const n = Number(id);
    if (ROLES.indexOf(role as Role) < 0) problems.push('resources: "' + role + '" is not one of ' + ROLES.join(', ') + example);
    else if (extra !== undefined || !Number.isSafeInteger(n) || n <= 0) problems.push('resources: "' + pair.trim() + '" is not role:id with a positive whole id' + example);
    else if (resources[role as Role] !== undefined) problems.push('resources: ' + role + ' is given twice');
    else if (seen.indexOf(n) >= 0) problems.push('resources: resource ' + n + ' is given twice');
    else {
      resources[role as Role] = n;
      seen.push(n);
    }
  }
  return resources;
}
