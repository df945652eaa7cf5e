// `feed-agent simulate`: a simulated device (docs/simulator.md). This file turns flags, environment and
// config file into settings, and owns the process: signals, output stream and exit code. Bad input is a
// UsageError (one line on stderr, exit 2, from main); the token is never printed.
import { ConfigError, isServiceUrl } from '../../../src/core/config';
import { demoFleetDevice, MAX_DEMO_DEVICES } from '../../../src/service';
import { checkSimConfig, SimConfigError } from '../sim/config';
import type { SimConfig } from '../sim/config';
import { SIM_UPLINK, SimulationInputError, startSimulation } from '../sim/simulator';
import type { Target } from '../sim/simulator';
import { StatusView } from '../sim/status';
import { readJsonFile } from './json-file';
import { listenHost, listening, listenPort, warnIfExposed } from './listen';
import { blockedPortProblem } from './ports';
import { handleStopSignals } from './stop-signals';
import { EXIT_USAGE, parseOptions, UsageError } from './usage';

const HELP = `usage: feed-agent simulate [options]

Simulates a device: feeds its resources with generated readings through the agent, shows commands sent
to its actuators, and shows the agent's counts as it goes. Without --url it starts the local service in
this process and simulates its demo device.

  --url URL              the service (or FEED_AGENT_URL, or "url" in the config)
  --key PUBLIC_KEY       the device's public key (or FEED_AGENT_PUBLIC_KEY, or "publicKey")
  --token TOKEN          the device's token (or FEED_AGENT_TOKEN, or "token"); never printed
  --ca FILE              trust the CA certificates in this PEM file besides the system's (a private service)
  --resources 73,74      resources to feed with a signal chosen from their subtype
  --devices N            simulate the first N devices of the demo fleet, of the local service or of the
                         one at --url (started with feed-agent serve --demo-devices N), with no key or
                         token; the status line sums them
  --config FILE          sensors, signals, actuators and uplink settings (JSON; see docs/simulator.md)
  --duration SECONDS     stop after this long (default: run until Ctrl-C)
  --drain-timeout SECONDS  on stop, how long the queue may take to drain (default 10)
  --auth-retry MS        while the service refuses the token, try it again this often (or "authRetryMs"
                         in the config's "uplink"; default ${SIM_UPLINK.authRetryMs})
  --durable DIR          keep the queue on disk in DIR, the backlog of an outage too (up to 256 MiB);
                         counters continue where they left off
  --ages                 send each sample's age with it (age_ms, our extension of the interface, or
                         "sendAge" in the config's "uplink"), so that a backlog is stored at the times it
                         was sampled; on by default against the local service, which takes it
  --port PORT            without --url: the port of the local service and its dashboard (default: a free one)
  --host HOST            without --url: its address (default 127.0.0.1); only a loopback one unless
                         --allow-demo-token, as the demo device's token is printed in the README
  --allow-demo-token     without --url: serve the demo on a --host other than loopback (with a warning)
  --json                 one JSON object per line instead of the status line

Exit status: 0 when every accepted sample was delivered or set aside, 1 otherwise, ${EXIT_USAGE} on bad input,
130 after a second Ctrl-C.`;

const DEFAULT_DRAIN_S = 10;

export const simulate = {
  summary: 'run a simulated device against the service (default: the local demo)',
  run: runSimulate,
};

async function runSimulate(args: string[]): Promise<void> {
  try {
    process.exitCode = await simulateOrThrow(args);
  } catch (e) {
    // Found by the simulator or the agent as they start: bad input all the same.
    throw e instanceof SimulationInputError || e instanceof ConfigError ? new UsageError(e.message) : e;
  }
}

async function simulateOrThrow(args: string[]): Promise<number> {
  const values = parseFlags(args);
  if (values.help === true) {
    console.log(HELP);
    return 0;
  }
  const config = values.config === undefined ? null : readConfig(values.config);
  const devices = values.devices === undefined ? 1 : deviceCount(values.devices);
  const local = localService(values, devices > 1 ? fleetTarget(values, config) : target(values, config));
  const view = new StatusView(values.json === true ? 'json' : process.stdout.isTTY ? 'tty' : 'plain', process.stdout, devices);
  const start = () => startSimulation({
    target: local.target,
    listen: local.listen,
    devices,
    config,
    resources: values.resources === undefined ? null : resourceList(values.resources),
    durationMs: values.duration === undefined ? null : seconds(values.duration, '--duration') * 1000,
    durableDir: values.durable ?? null,
    caFile: values.ca ?? null,
    authRetryMs: values['auth-retry'] === undefined ? null : milliseconds(values['auth-retry'], '--auth-retry'),
    ages: values.ages === true,
    drainMs: (values['drain-timeout'] === undefined ? DEFAULT_DRAIN_S : seconds(values['drain-timeout'], '--drain-timeout')) * 1000,
    view,
  });
  // A --host that is no address of this machine is bad input; with a URL nothing listens here.
  const simulation = await (local.listen === null ? start() : listening(start, local.listen.host));
  if (local.listen !== null) warnIfExposed('simulate', local.listen.host);
  const signals = handleStopSignals(
    (name) => simulation.stop(name),
    () => {
      // The durable queue, if any, already holds every accepted sample: leaving now loses nothing of it.
      const queued = simulation.stats().queued;
      const fate = values.durable === undefined ? 'lost (no --durable)' : `kept in ${values.durable} for the next run`;
      view.finish(`interrupted: ${queued} queued samples ${fate}`, { type: 'interrupted', queued });
      process.exit(130);
    },
    { SIGINT: 'Ctrl-C', SIGTERM: 'SIGTERM' },
  );
  // A reader that goes away (`simulate | head`) stops the run as a first Ctrl-C does: what is queued
  // drains, and the status lines that follow go nowhere, quietly.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
    if (!signals.stop()) return;
    console.error('feed-agent simulate: output closed: stopping, draining the queue');
    simulation.stop('output closed');
  });
  try {
    return await simulation.done;
  } finally {
    await signals.finish();
  }
}

function parseFlags(args: string[]) {
  return parseOptions('simulate', args, {
    url: { type: 'string' },
    key: { type: 'string' },
    token: { type: 'string' },
    ca: { type: 'string' },
    resources: { type: 'string' },
    devices: { type: 'string' },
    config: { type: 'string' },
    duration: { type: 'string' },
    'drain-timeout': { type: 'string' },
    'auth-retry': { type: 'string' },
    durable: { type: 'string' },
    ages: { type: 'boolean' },
    port: { type: 'string' },
    host: { type: 'string' },
    'allow-demo-token': { type: 'boolean' },
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
}

function readConfig(file: string): SimConfig {
  const json = readJsonFile(file, 'the config');
  try {
    return checkSimConfig(json);
  } catch (e) {
    if (e instanceof SimConfigError) throw new UsageError(`${file}: ${e.message}`);
    throw e;
  }
}

/**
 * Where the local service listens (null: there is none, a URL was given, and --host, --port and
 * --allow-demo-token have nothing to say).
 */
function localService(values: { host?: string; port?: string; 'allow-demo-token'?: boolean }, target: Target | null) {
  const given = [values.host !== undefined && '--host', values.port !== undefined && '--port', values['allow-demo-token'] === true && '--allow-demo-token'].filter(
    (x): x is string => typeof x === 'string',
  );
  if (target !== null) {
    if (given.length > 0) throw new UsageError(`${given.join(', ')}: only for the local service, which is not started when a URL is given`);
    return { target, listen: null };
  }
  const instead = '--url of a service with devices of your own (feed-agent serve --seed FILE)';
  const host = listenHost(values.host ?? '127.0.0.1', { allowed: values['allow-demo-token'] === true, instead });
  return { target, listen: { host, port: values.port === undefined ? 0 : listenPort(values.port) } };
}

/** The connection settings: a flag, else the environment, else the config; none of them: the local demo. */
function target(values: { url?: string; key?: string; token?: string; config?: string }, config: SimConfig | null): Target | null {
  const env = process.env;
  const pick = (flag: string | undefined, flagName: string, envName: string, configKey: keyof Target) => {
    if (flag !== undefined) return { value: flag, source: flagName };
    if (env[envName]) return { value: env[envName], source: envName };
    const fromConfig = config?.[configKey];
    return fromConfig === undefined ? undefined : { value: fromConfig, source: `"${configKey}" in ${values.config}` };
  };
  const url = pick(values.url, '--url', 'FEED_AGENT_URL', 'url');
  const key = pick(values.key, '--key', 'FEED_AGENT_PUBLIC_KEY', 'publicKey');
  const token = pick(values.token, '--token', 'FEED_AGENT_TOKEN', 'token');
  if (url === undefined) {
    const stray = key ?? token;
    if (stray !== undefined) throw new UsageError(`${stray.source} is given but no URL: without one the local demo device is simulated`);
    return null;
  }
  checkUrl(url.value, url.source);
  if (key === undefined || key.value === '') throw new UsageError('a public key is needed with a URL: --key, FEED_AGENT_PUBLIC_KEY or "publicKey" in the config');
  if (token === undefined || token.value === '') throw new UsageError('a token is needed with a URL: --token, FEED_AGENT_TOKEN or "token" in the config');
  return { url: url.value, publicKey: key.value, token: token.value };
}

/**
 * Where the demo fleet is: the URL as for one device (none: a local service). Its devices' keys and tokens
 * follow from their number, and each is shaped like the demo device: none of that may be given.
 */
function fleetTarget(values: { url?: string; key?: string; token?: string; resources?: string; config?: string }, config: SimConfig | null): Target | null {
  const given = [
    values.key !== undefined && '--key',
    values.token !== undefined && '--token',
    process.env.FEED_AGENT_PUBLIC_KEY && 'FEED_AGENT_PUBLIC_KEY',
    process.env.FEED_AGENT_TOKEN && 'FEED_AGENT_TOKEN',
    values.resources !== undefined && '--resources',
    ...(['publicKey', 'token', 'resources', 'sensors', 'actuators'] as const).map((key) =>
      config !== null && (Array.isArray(config[key]) ? (config[key] as unknown[]).length > 0 : config[key] !== undefined) && `"${key}" in ${values.config}`,
    ),
  ].filter((x): x is string => typeof x === 'string');
  if (given.length > 0) {
    throw new UsageError(`--devices simulates the demo fleet as it is, with its own keys, tokens and resources: not with ${given.join(', ')}`);
  }
  const url = values.url ?? (process.env.FEED_AGENT_URL || undefined) ?? config?.url;
  if (url === undefined) return null;
  checkUrl(url, 'the URL');
  // The fleet's first device; the others' keys and tokens follow from it.
  const first = demoFleetDevice(0);
  return { url, publicKey: first.publicKey, token: first.token };
}

/** An http(s) URL on a port that fetch connects to; `source` names where it came from. */
function checkUrl(url: string, source: string): void {
  const parsed = isServiceUrl(url) ? parseUrl(url) : null;
  if (parsed === null) throw new UsageError(`${source} must be an http:// or https:// URL, got ${JSON.stringify(url)}`);
  const blocked = blockedPortProblem(Number(parsed.port));
  if (blocked !== null) throw new UsageError(`${source}: ${blocked}`);
}

function parseUrl(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

function deviceCount(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > MAX_DEMO_DEVICES) throw new UsageError(`--devices must be an integer from 1 to ${MAX_DEMO_DEVICES}, got ${JSON.stringify(text)}`);
  return n;
}

function resourceList(text: string): number[] {
  const ids = text.split(',').map((part) => part.trim());
  if (!ids.every((id) => /^[1-9]\d{0,15}$/.test(id))) throw new UsageError(`--resources must be resource ids separated by commas, got ${JSON.stringify(text)}`);
  return ids.map(Number);
}

function milliseconds(text: string, option: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new UsageError(`${option} must be a whole number of milliseconds above 0, got ${JSON.stringify(text)}`);
  return Number(text);
}

function seconds(text: string, option: string): number {
  const value = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || !(value > 0)) throw new UsageError(`${option} must be a number of seconds above 0, got ${JSON.stringify(text)}`);
  return value;
}
