// The gateway's config file: its types, and one parse that reads the secrets it names (tokens and the
// broker password come from the environment or a file, never from the config) and lists every mistake at
// once. docs/gateway.md is its reference.
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { ReportConfig } from '../../../src/core/config';
import { reportProblems } from '../../../src/core/config';

export type FsyncPolicy = 'always' | 'interval' | 'never';
export type RegisterKind = 'coil' | 'discrete-input' | 'input-register' | 'holding-register';
export type RegisterType = 'int16' | 'uint16' | 'int32' | 'uint32' | 'float32';
/** Which 16-bit word of a 32-bit value comes first on the wire. */
export type WordOrder = 'high-first' | 'low-first';

export interface MqttBrokerConfig {
  /** mqtt://host:port or mqtts://host:port. */
  url: string;
  /** Fixed, so the broker keeps the session (and what it holds for it) across restarts. */
  clientId: string;
  username?: string;
  /** Read from `passwordEnv` or `passwordFile`. */
  password?: string;
  /** PEM file of the CA that signed the broker's certificate (mqtts). */
  caFile?: string;
  /** Further filters to subscribe to, beyond the resources' own; a topic they bring that no resource takes is counted. */
  subscribe: string[];
  keepaliveS: number;
}

export interface ModbusSourceConfig {
  name: string;
  host: string;
  port: number;
  unitId: number;
  timeoutMs: number;
}

/** A resource's readings from MQTT: every message on a topic matching `topic`. */
export interface MqttInput {
  topic: string;
  /** A field of a JSON payload (dotted path, e.g. `data.temp`); absent: the whole payload, a number or text. */
  field?: string;
}

/** A resource's readings polled from a Modbus register (or coil). */
export interface ModbusInput {
  source: string;
  kind: RegisterKind;
  /** 0-based, as on the wire (a manual's 40001 is holding register 0). */
  address: number;
  type: RegisterType;
  wordOrder: WordOrder;
  scale: number;
  offset: number;
  everyMs: number;
}

/** Where an actuator resource's new feeds go. */
export type CommandTarget =
  | { mqtt: { topic: string; retain: boolean }; everyMs: number }
  | { modbus: { source: string; kind: 'coil' | 'holding-register'; address: number; type: RegisterType; wordOrder: WordOrder; scale: number; offset: number }; everyMs: number };

export interface ResourceConfig {
  id: number;
  mqtt?: MqttInput;
  modbus?: ModbusInput;
  command?: CommandTarget;
  /** Report by exception for this resource's readings (the agent's rule, without the resource); absent: every reading goes. */
  report?: Omit<ReportConfig, 'resource'>;
}

export interface DeviceConfig {
  name: string;
  publicKey: string;
  /** From `tokenEnv` or `tokenFile`; never printed. */
  token: string;
  /** After this long without a reading from its sources, presence is no longer kept alive. */
  silenceMs: number;
  lastWill?: { topic: string; payload?: string };
  /** The capacity of its queue in memory, in readings: a window onto its durable queue, which holds all of them. */
  queue: number;
  /**
   * The bound of its durable queue on disk, in bytes (`overflowMiB`): the backlog of readings beyond the
   * queue in memory ends there, and MQTT acknowledgements wait.
   */
  overflowBytes: number;
  resources: ResourceConfig[];
}

export interface GatewayConfig {
  service: {
    url: string;
    /** Requests per second toward the service, for the whole gateway (one token bucket). */
    requestsPerSecond: number;
    /** Connections to the service, for the whole gateway. */
    connections: number;
    caFile?: string;
  };
  queue: { dir: string; fsync: FsyncPolicy; fsyncIntervalMs: number };
  mqtt?: MqttBrokerConfig;
  modbus: ModbusSourceConfig[];
  /** A status line every this many ms; 0: none. */
  statusEveryMs: number;
  /** The /metrics endpoint; null: none. */
  metrics: { host: string; port: number } | null;
  devices: DeviceConfig[];
}

/** Thrown by parseGatewayConfig: `problems` has one line per mistake, and the message lists them all. */
export class GatewayConfigError extends Error {
  constructor(readonly problems: string[]) {
    super('invalid gateway config:\n  ' + problems.join('\n  '));
  }

  override get name(): string {
    return 'GatewayConfigError';
  }
}

export const GATEWAY_DEFAULTS = Object.freeze({
  requestsPerSecond: 50,
  connections: 16,
  fsync: 'interval' as FsyncPolicy,
  fsyncIntervalMs: 1000,
  clientId: 'feed-agent-gateway',
  keepaliveS: 30,
  modbusPort: 502,
  unitId: 1,
  modbusTimeoutMs: 1000,
  everyMs: 1000,
  commandEveryMs: 2000,
  silenceS: 300,
  queue: 256,
  overflowMiB: 64,
  statusEveryS: 10,
  metricsHost: '127.0.0.1',
  metricsPort: 9464,
});

/** The least `overflowMiB`: 1 KiB, room for a few segments of a few readings each. */
const MIN_BACKLOG_MIB = 0.001;

const KINDS: RegisterKind[] = ['coil', 'discrete-input', 'input-register', 'holding-register'];
const TYPES: RegisterType[] = ['int16', 'uint16', 'int32', 'uint32', 'float32'];
const ORDERS: WordOrder[] = ['high-first', 'low-first'];

/**
 * Checks a parsed config file and fills in defaults. `env` gives the variables named by `tokenEnv` and
 * `passwordEnv`; relative paths (`tokenFile`, `passwordFile`, `caFile`, `queue.dir`) are taken from
 * `baseDir`. Throws one GatewayConfigError naming every mistake; a secret's value is never quoted.
 */
export function parseGatewayConfig(json: unknown, env: NodeJS.ProcessEnv, baseDir: string): GatewayConfig {
  const p = new Problems();
  const root = p.object(json, 'config', ['service', 'queue', 'mqtt', 'modbus', 'status', 'metrics', 'devices']);
  const path = (v: string): string => (isAbsolute(v) ? v : resolve(baseDir, v));

  const service = p.object(root.service, 'service', ['url', 'requestsPerSecond', 'connections', 'caFile'], true);
  const url = p.string(service.url, 'service.url', true);
  if (url !== undefined && !/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/.test(url)) p.add('service.url: expected an http:// or https:// URL, got ' + show(url));
  const serviceCa = p.string(service.caFile, 'service.caFile');
  const requestsPerSecond = p.number(service.requestsPerSecond, 'service.requestsPerSecond', 0.01) ?? GATEWAY_DEFAULTS.requestsPerSecond;
  const connections = p.integer(service.connections, 'service.connections', 1, 1024) ?? GATEWAY_DEFAULTS.connections;

  const queue = p.object(root.queue, 'queue', ['dir', 'fsync', 'fsyncIntervalMs'], true);
  const dir = p.string(queue.dir, 'queue.dir', true);
  const fsync = p.oneOf(queue.fsync, 'queue.fsync', ['always', 'interval', 'never']) ?? GATEWAY_DEFAULTS.fsync;
  const fsyncIntervalMs = p.integer(queue.fsyncIntervalMs, 'queue.fsyncIntervalMs', 1) ?? GATEWAY_DEFAULTS.fsyncIntervalMs;

  const modbus: ModbusSourceConfig[] = [];
  const modbusRoot = root.modbus === undefined ? {} : p.object(root.modbus, 'modbus', null);
  for (const [name, raw] of Object.entries(modbusRoot)) {
    const at = 'modbus.' + name;
    const m = p.object(raw, at, ['host', 'port', 'unitId', 'timeoutMs'], true);
    modbus.push({
      name,
      host: p.string(m.host, at + '.host', true) ?? '',
      port: p.integer(m.port, at + '.port', 1, 65535) ?? GATEWAY_DEFAULTS.modbusPort,
      unitId: p.integer(m.unitId, at + '.unitId', 0, 255) ?? GATEWAY_DEFAULTS.unitId,
      timeoutMs: p.integer(m.timeoutMs, at + '.timeoutMs', 1) ?? GATEWAY_DEFAULTS.modbusTimeoutMs,
    });
  }
  const modbusNames = new Set(modbus.map((m) => m.name));

  let mqtt: MqttBrokerConfig | undefined;
  if (root.mqtt !== undefined) {
    const m = p.object(root.mqtt, 'mqtt', ['url', 'clientId', 'username', 'passwordEnv', 'passwordFile', 'caFile', 'subscribe', 'keepaliveS'], true);
    const brokerUrl = p.string(m.url, 'mqtt.url', true);
    if (brokerUrl !== undefined && !/^mqtts?:\/\/[^/?#\s]+\/?$/.test(brokerUrl)) p.add('mqtt.url: expected mqtt://HOST[:PORT] or mqtts://HOST[:PORT], got ' + show(brokerUrl));
    const caFile = p.string(m.caFile, 'mqtt.caFile');
    if (caFile !== undefined && !brokerUrl?.startsWith('mqtts://')) p.add('mqtt.caFile: only for an mqtts:// broker');
    const subscribe = m.subscribe === undefined ? [] : p.list(m.subscribe, 'mqtt.subscribe').map((f, i) => p.topicFilter(f, `mqtt.subscribe[${i}]`) ?? '');
    mqtt = {
      url: brokerUrl ?? '',
      clientId: p.string(m.clientId, 'mqtt.clientId') ?? GATEWAY_DEFAULTS.clientId,
      username: p.string(m.username, 'mqtt.username'),
      password: p.secret(m.passwordEnv, m.passwordFile, 'mqtt.password', env, path, false),
      caFile: caFile === undefined ? undefined : p.readable(path(caFile), 'mqtt.caFile'),
      subscribe,
      keepaliveS: p.integer(m.keepaliveS, 'mqtt.keepaliveS', 1, 65535) ?? GATEWAY_DEFAULTS.keepaliveS,
    };
  }

  const status = root.status === undefined ? {} : p.object(root.status, 'status', ['everyS']);
  const statusEveryS = p.number(status.everyS, 'status.everyS', 0) ?? GATEWAY_DEFAULTS.statusEveryS;

  let metrics: GatewayConfig['metrics'] = { host: GATEWAY_DEFAULTS.metricsHost, port: GATEWAY_DEFAULTS.metricsPort };
  if (root.metrics === false) metrics = null;
  else if (root.metrics !== undefined) {
    const m = p.object(root.metrics, 'metrics (an object, or false for none)', ['host', 'port']);
    metrics = {
      host: p.string(m.host, 'metrics.host') ?? GATEWAY_DEFAULTS.metricsHost,
      port: p.integer(m.port, 'metrics.port', 0, 65535) ?? GATEWAY_DEFAULTS.metricsPort,
    };
  }

  const devices: DeviceConfig[] = [];
  const keys = new Set<string>();
  const names = new Set<string>();
  p.list(root.devices, 'devices', true).forEach((raw, i) => {
    const d = p.object(raw, `devices[${i}]`, ['name', 'publicKey', 'tokenEnv', 'tokenFile', 'silenceS', 'lastWill', 'queue', 'overflowMiB', 'resources'], true);
    const publicKey = p.string(d.publicKey, `devices[${i}].publicKey`, true) ?? '';
    const name = p.string(d.name, `devices[${i}].name`) ?? (publicKey || `device ${i}`);
    const at = `devices[${i}] (${name})`;
    if (publicKey !== '' && keys.has(publicKey)) p.add(`${at}.publicKey: ${publicKey} is served twice (each device once per gateway)`);
    if (names.has(name)) p.add(`${at}.name: ${show(name)} names two devices`);
    keys.add(publicKey);
    names.add(name);
    const token = p.secret(d.tokenEnv, d.tokenFile, `${at}.token`, env, path, true) ?? '';
    let lastWill: DeviceConfig['lastWill'];
    if (d.lastWill !== undefined) {
      const w = p.object(d.lastWill, `${at}.lastWill`, ['topic', 'payload'], true);
      const topic = p.topicFilter(w.topic, `${at}.lastWill.topic`, true);
      if (topic !== undefined) lastWill = { topic, payload: p.string(w.payload, `${at}.lastWill.payload`) };
      if (mqtt === undefined) p.add(`${at}.lastWill: needs an "mqtt" broker`);
    }
    const ids = new Set<number>();
    const resources = p.list(d.resources, `${at}.resources`, true).map((rawResource, j): ResourceConfig => {
      const r = p.object(rawResource, `${at}.resources[${j}]`, ['id', 'mqtt', 'modbus', 'command', 'report'], true);
      const id = p.integer(r.id, `${at}.resources[${j}].id`, 1, Number.MAX_SAFE_INTEGER, true) ?? 0;
      const rat = `${at}.resources[${j}] (${id})`;
      if (id > 0 && ids.has(id)) p.add(`${rat}: resource ${id} is listed twice`);
      ids.add(id);
      const out: ResourceConfig = { id };
      const inputs = ['mqtt', 'modbus', 'command'].filter((k) => r[k] !== undefined);
      if (inputs.length !== 1) p.add(`${rat}: expected exactly one of "mqtt", "modbus", "command", got ${inputs.length === 0 ? 'none' : inputs.join(', ')}`);
      if (r.mqtt !== undefined) {
        const m = p.object(r.mqtt, `${rat}.mqtt`, ['topic', 'field'], true);
        const topic = p.topicFilter(m.topic, `${rat}.mqtt.topic`, true) ?? '';
        const field = p.string(m.field, `${rat}.mqtt.field`);
        if (mqtt === undefined) p.add(`${rat}.mqtt: needs an "mqtt" broker`);
        out.mqtt = field === undefined ? { topic } : { topic, field };
      }
      if (r.modbus !== undefined) {
        const m = p.object(r.modbus, `${rat}.modbus`, ['source', 'kind', 'address', 'type', 'wordOrder', 'scale', 'offset', 'everyMs'], true);
        const source = p.string(m.source, `${rat}.modbus.source`, true) ?? '';
        if (source !== '' && !modbusNames.has(source)) p.add(`${rat}.modbus.source: ${show(source)} is not one of "modbus" (${[...modbusNames].join(', ') || 'none configured'})`);
        const kind = p.oneOf(m.kind, `${rat}.modbus.kind`, KINDS, true) ?? 'holding-register';
        const bit = kind === 'coil' || kind === 'discrete-input';
        const type = p.oneOf(m.type, `${rat}.modbus.type`, TYPES) ?? (bit ? 'uint16' : 'int16');
        if (bit && m.type !== undefined) p.add(`${rat}.modbus.type: a ${kind} is one bit; no type`);
        out.modbus = {
          source,
          kind,
          address: p.integer(m.address, `${rat}.modbus.address`, 0, 65535, true) ?? 0,
          type,
          wordOrder: p.oneOf(m.wordOrder, `${rat}.modbus.wordOrder`, ORDERS) ?? 'high-first',
          scale: p.number(m.scale, `${rat}.modbus.scale`) ?? 1,
          offset: p.number(m.offset, `${rat}.modbus.offset`) ?? 0,
          everyMs: p.integer(m.everyMs, `${rat}.modbus.everyMs`, 10) ?? GATEWAY_DEFAULTS.everyMs,
        };
      }
      if (r.command !== undefined) out.command = parseCommand(p, r.command, `${rat}.command`, modbusNames, mqtt !== undefined);
      if (r.report !== undefined) {
        const problems = reportProblems(r.report, `${rat}.report.`);
        if (r.command !== undefined) problems.push(`${rat}.report: a command resource takes no readings to report`);
        problems.forEach((problem) => p.add(problem));
        if (problems.length === 0) out.report = r.report as Omit<ReportConfig, 'resource'>;
      }
      return out;
    });
    devices.push({
      name,
      publicKey,
      token,
      silenceMs: (p.number(d.silenceS, `${at}.silenceS`, 1) ?? GATEWAY_DEFAULTS.silenceS) * 1000,
      ...(lastWill === undefined ? {} : { lastWill }),
      queue: p.integer(d.queue, `${at}.queue`, 16, 1_000_000) ?? GATEWAY_DEFAULTS.queue,
      overflowBytes: Math.round((p.backlogBound(d.overflowMiB, `${at}.overflowMiB`) ?? GATEWAY_DEFAULTS.overflowMiB) * 1024 * 1024),
      resources,
    });
  });

  p.check();
  return {
    service: {
      url: url as string,
      requestsPerSecond,
      connections,
      ...(serviceCa === undefined ? {} : { caFile: path(serviceCa) }),
    },
    queue: { dir: path(dir as string), fsync, fsyncIntervalMs },
    ...(mqtt === undefined ? {} : { mqtt }),
    modbus,
    statusEveryMs: statusEveryS * 1000,
    metrics,
    devices,
  };
}

function parseCommand(p: Problems, raw: unknown, at: string, modbusNames: Set<string>, haveMqtt: boolean): CommandTarget {
  const c = p.object(raw, at, ['mqtt', 'modbus', 'everyMs'], true);
  const everyMs = p.integer(c.everyMs, at + '.everyMs', 100) ?? GATEWAY_DEFAULTS.commandEveryMs;
  if ((c.mqtt === undefined) === (c.modbus === undefined)) p.add(`${at}: expected exactly one of "mqtt", "modbus"`);
  if (c.mqtt !== undefined) {
    const m = p.object(c.mqtt, at + '.mqtt', ['topic', 'retain'], true);
    const topic = p.string(m.topic, at + '.mqtt.topic', true) ?? '';
    if (/[+#]/.test(topic)) p.add(`${at}.mqtt.topic: a topic to publish to has no wildcard, got ${show(topic)}`);
    if (!haveMqtt) p.add(`${at}.mqtt: needs an "mqtt" broker`);
    return { mqtt: { topic, retain: p.boolean(m.retain, at + '.mqtt.retain') ?? false }, everyMs };
  }
  const m = p.object(c.modbus, at + '.modbus', ['source', 'kind', 'address', 'type', 'wordOrder', 'scale', 'offset'], true);
  const source = p.string(m.source, at + '.modbus.source', true) ?? '';
  if (source !== '' && !modbusNames.has(source)) p.add(`${at}.modbus.source: ${show(source)} is not one of "modbus"`);
  const kind = p.oneOf(m.kind, at + '.modbus.kind', ['coil', 'holding-register'] as const, true) ?? 'coil';
  return {
    modbus: {
      source,
      kind,
      address: p.integer(m.address, at + '.modbus.address', 0, 65535, true) ?? 0,
      type: p.oneOf(m.type, at + '.modbus.type', TYPES) ?? 'int16',
      wordOrder: p.oneOf(m.wordOrder, at + '.modbus.wordOrder', ORDERS) ?? 'high-first',
      scale: p.number(m.scale, at + '.modbus.scale') ?? 1,
      offset: p.number(m.offset, at + '.modbus.offset') ?? 0,
    },
    everyMs,
  };
}

/** Collects mistakes while the parse goes on, so that one run names them all. */
class Problems {
  private readonly mistakes: string[] = [];

  add(problem: string): void {
    this.mistakes.push(problem);
  }

  check(): void {
    if (this.mistakes.length > 0) throw new GatewayConfigError(this.mistakes);
  }

  /** An object with only `keys` (null: any key); a bad one counts as a mistake and reads as empty. */
  object(v: unknown, at: string, keys: string[] | null, required = false): Record<string, unknown> {
    if (v === undefined) {
      if (required) this.add(at + ': required');
      return {};
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      this.add(at + ': expected an object, got ' + show(v));
      return {};
    }
    const record = v as Record<string, unknown>;
    if (keys !== null) for (const key of Object.keys(record)) if (!keys.includes(key)) this.add(`${at}.${key}: unknown key (expected ${keys.join(', ')})`);
    return record;
  }

  list(v: unknown, at: string, required = false): unknown[] {
    if (v === undefined) {
      if (required) this.add(at + ': required');
      return [];
    }
    if (!Array.isArray(v)) {
      this.add(at + ': expected an array, got ' + show(v));
      return [];
    }
    if (required && v.length === 0) this.add(at + ': expected at least one');
    return v;
  }

  string(v: unknown, at: string, required = false): string | undefined {
    if (v === undefined) {
      if (required) this.add(at + ': required');
      return undefined;
    }
    if (typeof v !== 'string' || v === '') {
      this.add(at + ': expected a non-empty string, got ' + show(v));
      return undefined;
    }
    return v;
  }

  boolean(v: unknown, at: string): boolean | undefined {
    if (v === undefined) return undefined;
    if (typeof v !== 'boolean') this.add(at + ': expected true or false, got ' + show(v));
    return typeof v === 'boolean' ? v : undefined;
  }

  number(v: unknown, at: string, min = -Infinity): number | undefined {
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min) {
      this.add(`${at}: expected a number${min > -Infinity ? ' ≥ ' + min : ''}, got ${show(v)}`);
      return undefined;
    }
    return v;
  }

  /**
   * `overflowMiB`, the bound of a device's backlog: from 0.001 (1 KiB, a few segments of readings). An
   * old config's 0 turned its overflow off, which the backlog cannot be: said so, with what to give instead.
   */
  backlogBound(v: unknown, at: string): number | undefined {
    if (v === 0) {
      this.add(
        `${at}: 0 turned the overflow off; there is no overflow of its own any more: the readings its queue in memory ` +
          'cannot hold wait in its durable queue on disk, which overflowMiB now bounds (docs/gateway.md, "The backlog"). ' +
          `Give the disk it may use, in MiB (default ${GATEWAY_DEFAULTS.overflowMiB})`,
      );
      return undefined;
    }
    return this.number(v, at, MIN_BACKLOG_MIB);
  }

  integer(v: unknown, at: string, min: number, max = Number.MAX_SAFE_INTEGER, required = false): number | undefined {
    if (v === undefined) {
      if (required) this.add(at + ': required');
      return undefined;
    }
    if (!Number.isSafeInteger(v) || (v as number) < min || (v as number) > max) {
      this.add(`${at}: expected an integer from ${min}${max < Number.MAX_SAFE_INTEGER ? ' to ' + max : ' up'}, got ${show(v)}`);
      return undefined;
    }
    return v as number;
  }

  oneOf<T extends string>(v: unknown, at: string, allowed: readonly T[], required = false): T | undefined {
    if (v === undefined) {
      if (required) this.add(at + ': required');
      return undefined;
    }
    if (!allowed.includes(v as T)) {
      this.add(`${at}: expected one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}, got ${show(v)}`);
      return undefined;
    }
    return v as T;
  }

  /** An MQTT topic filter: `+` a whole level, `#` the whole last level. */
  topicFilter(v: unknown, at: string, required = false): string | undefined {
    const filter = this.string(v, at, required);
    if (filter === undefined) return undefined;
    const levels = filter.split('/');
    const bad = levels.some((level, i) => (level.includes('+') && level !== '+') || (level.includes('#') && (level !== '#' || i !== levels.length - 1)));
    if (bad) this.add(`${at}: ${show(filter)} is not a topic filter ("+" stands for a whole level, "#" for the last one)`);
    return bad ? undefined : filter;
  }

  /** A secret from an environment variable or a file (trimmed); its value is never quoted. */
  secret(envName: unknown, file: unknown, at: string, env: NodeJS.ProcessEnv, path: (v: string) => string, required: boolean): string | undefined {
    const prefix = at.replace(/\.(token|password)$/, '.');
    const what = at.endsWith('token') ? 'token' : 'password';
    if (envName !== undefined && file !== undefined) {
      this.add(`${prefix}${what}Env / ${what}File: give one of them`);
      return undefined;
    }
    if (envName !== undefined) {
      const name = this.string(envName, `${prefix}${what}Env`);
      if (name === undefined) return undefined;
      const value = env[name]?.trim();
      if (!value) this.add(`${prefix}${what}Env: the environment variable ${name} is not set or empty`);
      return value || undefined;
    }
    if (file !== undefined) {
      const name = this.string(file, `${prefix}${what}File`);
      if (name === undefined) return undefined;
      try {
        const value = readFileSync(path(name), 'utf8').trim();
        if (value === '') this.add(`${prefix}${what}File: ${name} is empty`);
        return value || undefined;
      } catch (e) {
        this.add(`${prefix}${what}File: cannot read ${name}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
        return undefined;
      }
    }
    if (required) this.add(`${prefix}${what}Env or ${what}File: required (a ${what} is never written in the config)`);
    return undefined;
  }

  readable(file: string, at: string): string | undefined {
    try {
      readFileSync(file);
      return file;
    } catch (e) {
      this.add(`${at}: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      return undefined;
    }
  }
}

function show(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (typeof v === 'string') return JSON.stringify(v.length > 60 ? v.slice(0, 60) + '…' : v);
  if (Array.isArray(v)) return 'an array';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'an object' : String(v);
}
