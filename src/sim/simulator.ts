// The simulated device: a plan of sensors and actuators, an agent on the Node host (optionally with a
// durable queue), the status view, and the stop that drains the queue. Against no URL it starts the
// local service in this process and simulates its demo device.
import { join } from 'node:path';
import { createAgent } from '../core/agent';
import type { Agent, AgentStats } from '../core/agent';
import type { AgentConfig } from '../core/config';
import { FeedClient } from '../core/client';
import { FeedError } from '../core/errors';
import type { Host, LogLevel, QueueStorage } from '../core/host';
import type { Resource } from '../core/wire';
import { createNodeHost, openDurableQueue } from '../../platforms/node';
import type { DurableQueue } from '../../platforms/node';
import { DEMO_ACTUATORS, DEMO_RESOURCES, startService } from '../service';
import type { RunningService } from '../service';
import type { SimConfig } from './config';
import { CounterLedger } from './ledger';
import { planFor } from './plan';
import type { Plan } from './plan';
import { createSignal, describeSignal } from './signals';
import { STATUS_INTERVAL_MS } from './status';
import type { StatusView } from './status';

export interface Target {
  url: string;
  publicKey: string;
  token: string;
}

export interface SimulationOptions {
  /** Null: start the local service in this process and simulate its demo device. */
  target: Target | null;
  config: SimConfig | null;
  /** From --resources: overrides the config's `resources`. */
  resources: number[] | null;
  durationMs: number | null;
  /** Directory of the durable queue (and of the counters' ledger). */
  durableDir: string | null;
  /** A PEM file of extra CA certificates to trust (--ca). */
  caFile: string | null;
  drainMs: number;
  view: StatusView;
}

export interface Simulation {
  /** Resolves with the exit code once the agent has stopped: 0 when every accepted sample was delivered or set aside. */
  done: Promise<number>;
  /** Stops sampling and drains the queue; a second call does nothing. */
  stop(reason: string): void;
  /** The counts now, for a last word before an immediate exit. */
  stats(): AgentStats;
}

/** Bad input found while starting (unknown resources, an unusable directory, nothing to do): exit 2. */
export class SimulationInputError extends Error {}

// A simulator is watched while it runs: send sooner than a battery-powered device would, and spread the
// first flush less (a fleet of simulators is rarely rebooted at once).
const SIM_UPLINK = { flushMs: 2_000, maxLatencyMs: 5_000, startJitterMs: 250 };
const LOOKUP_TIMEOUT_MS = 10_000;

export async function startSimulation(o: SimulationOptions): Promise<Simulation> {
  const config = o.config;
  const explicit = new Set([...(config?.sensors ?? []), ...(config?.actuators ?? [])].map((x) => x.resource));
  const demoDefault = o.target === null && config === null;
  const auto = (o.resources ?? config?.resources ?? (demoDefault ? DEMO_RESOURCES : []))
    .filter((id, i, all) => !explicit.has(id) && all.indexOf(id) === i);
  if (auto.length === 0 && explicit.size === 0) {
    throw new SimulationInputError('nothing to simulate: name the resources with --resources or in --config (the service cannot list a device\'s resources)');
  }

  let service: RunningService | null = null;
  let queue: DurableQueue | null = null;
  try {
    let target = o.target;
    if (target === null) {
      service = await startService({ dashboard: {} });
      target = { url: service.url, publicKey: service.demo!.publicKey, token: service.demo!.token };
    }
    // One host, so the lookup and the agent share one HTTP client (and a CA file is read once).
    // The CA file is read when it is made: one that cannot be read is bad input.
    const host = asInput(`--ca ${o.caFile}`, () => createNodeHost({ caFile: o.caFile ?? undefined }));
    const plan = await makePlan(target, config, auto, o.target === null ? DEMO_ACTUATORS : [], host.request);
    let storage: QueueStorage | undefined;
    if (o.durableDir !== null) {
      const dir = o.durableDir;
      const q = (queue = asInput(`--durable ${dir}`, () => openDurableQueue(join(dir, 'queue'))));
      const counters = new Set(plan.sensors.filter((s) => s.spec.signal === 'counter').map((s) => s.resource));
      const ledger = asInput(`--durable ${dir}`, () => new CounterLedger(join(dir, 'counters.json'), counters, q));
      storage = ledger.wrap(q);
      plan.sensors = plan.sensors.map((s) => (s.spec.signal === 'counter' ? { ...s, spec: { ...s.spec, start: ledger.resume(s.resource, s.spec.start) } } : s));
    }
    const agentConfig: AgentConfig = {
      ...target,
      sensors: plan.sensors.map((s) => ({
        resource: s.resource,
        every: s.every,
        read: createSignal(s.spec, { now: () => performance.now(), random: Math.random }),
      })),
      actuators: plan.actuators.map((a) => ({
        resource: a.resource,
        every: a.every,
        handle: (value, feed) =>
          o.view.event(`command   ${label(a.resource, a.name)} <- ${JSON.stringify(value)} (feed ${feed.id_resource_feed})`, {
            type: 'command',
            resource: a.resource,
            value,
            feed: feed.id_resource_feed,
          }),
      })),
      uplink: { ...SIM_UPLINK, ...config?.uplink },
    };
    const log = (level: LogLevel, message: string): void => {
      if (level !== 'debug') o.view.event(`${level}: ${message}`, { type: 'log', level, message });
    };
    const agent = createAgent({ ...host, storage, log }, agentConfig);
    // From here the agent owns the storage: start() closes it when it fails, stop() when it ends.
    queue = null;
    showStart(o, target, service?.dashboard?.url ?? null, plan);
    await agent.start();
    const running = service;
    return run(o, agent, () => running?.close());
  } catch (e) {
    queue?.close();
    await service?.close();
    throw e;
  }
}

/** The config's sensors and actuators, then a sensor (or a demo actuator) for every other resource named. */
async function makePlan(
  target: Target,
  config: SimConfig | null,
  auto: number[],
  actuators: number[],
  request: Host['request'],
): Promise<Plan> {
  const plan: Plan = { sensors: [...(config?.sensors ?? [])], actuators: [...(config?.actuators ?? [])], skipped: [] };
  if (auto.length === 0) return plan;
  const client = new FeedClient(request, { baseUrl: target.url, publicKey: target.publicKey, token: target.token, timeoutMs: LOOKUP_TIMEOUT_MS });
  let resources: Resource[];
  try {
    resources = await client.getResources(auto);
  } catch (e) {
    const message = 'cannot read resources ' + auto.join(',') + ' to plan their signals: ' + (e as Error).message;
    // A resource the device does not have is bad input, like a bad flag.
    throw e instanceof FeedError && e.status === 404 ? new SimulationInputError(message) : new Error(message);
  }
  const found = planFor(resources, actuators);
  return { sensors: [...plan.sensors, ...found.sensors], actuators: [...plan.actuators, ...found.actuators], skipped: found.skipped };
}

function run(o: SimulationOptions, agent: Agent, closeService: () => unknown): Simulation {
  const startedAt = performance.now();
  const ticker = setInterval(() => o.view.update(agent.stats(), performance.now(), startedAt), STATUS_INTERVAL_MS[o.view.mode]);
  let finish: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => (finish = resolve));
  let stopping = false;
  const stop = (reason: string): void => {
    if (stopping) return;
    stopping = true;
    clearTimeout(deadline);
    const queued = agent.stats().queued;
    o.view.event(`stopping (${reason}): delivering ${queued} queued samples, for at most ${o.drainMs / 1000} s; a second Ctrl-C quits at once`, {
      type: 'stopping',
      reason,
      queued,
    });
    void agent.stop({ flush: true, timeoutMs: o.drainMs }).then(async (stats) => {
      clearInterval(ticker);
      o.view.update(stats, performance.now(), startedAt);
      await closeService();
      const ok = stats.queued === 0 && stats.droppedOverflow === 0;
      const elapsedMs = Math.round(performance.now() - startedAt);
      o.view.finish(summaryLine(stats, ok, elapsedMs, o.durableDir), { type: 'summary', ok, elapsedMs, ...stats });
      finish(ok ? 0 : 1);
    });
  };
  const deadline = o.durationMs === null ? undefined : setTimeout(() => stop('duration reached'), o.durationMs);
  return { done, stop, stats: () => agent.stats() };
}

function summaryLine(s: AgentStats, ok: boolean, elapsedMs: number, durableDir: string | null): string {
  const counts = `accepted ${s.accepted}, delivered ${s.sent}, set aside ${s.setAside}, dropped ${s.droppedOverflow}, still queued ${s.queued}`;
  const verdict = ok
    ? 'every accepted sample was delivered or set aside'
    : `${s.queued + s.droppedOverflow} samples were not delivered` + (s.queued > 0 && durableDir !== null ? ` (the queued ones stay in ${durableDir} for the next run)` : '');
  return `done in ${(elapsedMs / 1000).toFixed(1)} s: ${counts}; ${verdict}`;
}

/** `dashboard`: the page of the local service started in this process; null against another service. */
function showStart(o: SimulationOptions, target: Target, dashboard: string | null, plan: Plan): void {
  const local = dashboard !== null;
  const lines = [
    `feed-agent simulate: device ${target.publicKey} at ${target.url}${local ? ' (local demo service, in this process)' : ''}` +
      (o.durableDir === null ? '' : `, durable queue in ${o.durableDir}`),
    ...(local ? [`  dashboard ${dashboard}  (charts, presence, and a control to command the actuators)`] : []),
    ...plan.sensors.map((s) => `  sensor    ${label(s.resource, s.name)} ${describeSignal(s.spec)}, every ${s.every} ms`),
    ...plan.actuators.map((a) => `  actuator  ${label(a.resource, a.name)} commands polled every ${a.every} ms`),
    ...plan.skipped.map((s) => `  skipped   ${label(s.resource, s.name)} ${s.reason}`),
    o.durationMs === null ? 'Ctrl-C stops: the queue is delivered first; a second Ctrl-C quits at once.' : `Runs for ${o.durationMs / 1000} s; Ctrl-C stops sooner.`,
  ];
  o.view.event(lines.join('\n'), {
    type: 'start',
    url: target.url,
    publicKey: target.publicKey,
    localService: local,
    dashboard,
    durable: o.durableDir,
    sensors: plan.sensors.map((s) => ({ resource: s.resource, name: s.name, every: s.every, ...s.spec })),
    actuators: plan.actuators,
    skipped: plan.skipped,
  });
}

function label(resource: number, name: string): string {
  return (String(resource) + ' ' + name).padEnd(22);
}

/** `make()`, with a failure turned into bad input that names the flag it came from. */
function asInput<T>(flag: string, make: () => T): T {
  try {
    return make();
  } catch (e) {
    throw new SimulationInputError(`${flag}: ${(e as Error).message}`);
  }
}
