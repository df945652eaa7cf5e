// The simulated device: a plan of sensors and actuators, an agent on the Node host (optionally with a
// durable queue), the status view, and the stop that drains the queue. Against no URL it starts the
// local service in this process and simulates its demo device. A fleet (`devices` > 1) is the demo fleet
// (docs/service.md): one agent per device, all through one bounded HTTP pool, its counts summed.
import { join } from 'node:path';
import { createAgent } from '../../../src/core/agent';
import type { Agent, AgentStats } from '../../../src/core/agent';
import type { AgentConfig } from '../../../src/core/config';
import { FeedClient } from '../../../src/core/wire/client';
import { ConfigError } from '../../../src/core/config';
import { FeedError } from '../../../src/core/wire/errors';
import type { Host, LogLevel, QueueStorage } from '../../../src/core/host/host';
import type { Resource } from '../../../src/core/wire/wire';
import { createNodeHost } from '../host/host';
import { openDurableQueue } from '../storage/durable-queue';
import type { DurableQueue } from '../storage/durable-queue';
import { DEMO_ACTUATORS, DEMO_RESOURCES, demoFleetDevice, startService } from '../../../src/service';
import type { RunningService } from '../../../src/service';
import type { SimConfig } from './config';
import { CounterLedger } from './ledger';
import { planFor } from './plan';
import type { Plan, Report } from './plan';
import { refusedReadings } from './refusals';
import { createSignal, describeSignal } from './signals';
import { STATUS_INTERVAL_MS, sumStats } from './status';
import type { StatusView } from './status';

export interface Target {
  url: string;
  publicKey: string;
  token: string;
}

export interface SimulationOptions {
  /** Null: start the local service in this process and simulate its demo device. */
  target: Target | null;
  /** With no target: where the local service listens (default 127.0.0.1, a free port). */
  listen?: { host: string; port: number } | null;
  /**
   * Above 1: simulate the first `devices` devices of the demo fleet (docs/service.md); `target` is then its
   * first device (or null: a local service), and the config gives at most the uplink settings.
   */
  devices: number;
  config: SimConfig | null;
  /** From --resources: overrides the config's `resources`. */
  resources: number[] | null;
  durationMs: number | null;
  /** Directory of the durable queue (and of the counters' ledger). */
  durableDir: string | null;
  /** A PEM file of extra CA certificates to trust (--ca). */
  caFile: string | null;
  /** From --auth-retry: overrides the config's `uplink.authRetryMs`. */
  authRetryMs: number | null;
  /** --ages: each sample's age goes with it (`uplink.sendAge`), whatever the config says. */
  ages: boolean;
  drainMs: number;
  view: StatusView;
}

export interface Simulation {
  /** Resolves with the exit code once the agent has stopped: 0 when every accepted sample was delivered or set aside. */
  done: Promise<number>;
  /** Stops sampling and drains the queue; a second call does nothing. */
  stop(reason: string): void;
  /** The counts now (summed over a fleet), for a last word before an immediate exit. */
  stats(): AgentStats;
}

/** Bad input found while starting (unknown resources, an unusable directory, nothing to do): exit 2. */
export class SimulationInputError extends Error {}

// A simulator is watched while it runs: send sooner than a battery-powered device would, spread the
// first flush less (a fleet of simulators is rarely rebooted at once), and try a refused token again
// within seconds rather than the agent's 5 min, so that a restored token is seen to resume delivery.
export const SIM_UPLINK = { flushMs: 2_000, maxLatencyMs: 5_000, startJitterMs: 250, authRetryMs: 5_000 };
const LOOKUP_TIMEOUT_MS = 10_000;
/** A fleet's agents share one HTTP pool of at most this many connections (docs/gateway.md). */
export const FLEET_CONNECTIONS = 32;

/** One simulated device: where it is, and its sensors and actuators. */
interface Device {
  target: Target;
  plan: Plan;
  /** How its events are named: '' alone, `device 3: ` in a fleet. */
  label: string;
}

export async function startSimulation(o: SimulationOptions): Promise<Simulation> {
  const config = o.config;
  const explicit = new Set([...(config?.sensors ?? []), ...(config?.actuators ?? [])].map((x) => x.resource));
  const demoDefault = (o.target === null && config === null) || o.devices > 1;
  const auto = (o.resources ?? config?.resources ?? (demoDefault ? DEMO_RESOURCES : []))
    .filter((id, i, all) => !explicit.has(id) && all.indexOf(id) === i);
  if (auto.length === 0 && explicit.size === 0) {
    throw new SimulationInputError('nothing to simulate: name the resources with --resources or in --config (the service cannot list a device\'s resources)');
  }

  let service: RunningService | null = null;
  const queues: DurableQueue[] = [];
  try {
    let target = o.target;
    if (target === null) {
      service = await startService({ dashboard: {}, ...o.listen, ...(o.devices > 1 ? { demoDevices: o.devices } : {}) });
      target = { url: service.url, publicKey: service.demo!.publicKey, token: service.demo!.token };
    }
    // One host, so the lookup and the agents share one HTTP client (and a CA file is read once).
    // The CA file is read when it is made: one that cannot be read is bad input.
    const connections = o.devices > 1 ? FLEET_CONNECTIONS : undefined;
    const host = asInput(`--ca ${o.caFile}`, () => createNodeHost({ caFile: o.caFile ?? undefined, connections }));
    const demo = o.target === null || o.devices > 1;
    // The demo greenhouse as it is, without a config or resources of the user's: its report rules too.
    const plan = await makePlan(target, config, auto, demo ? DEMO_ACTUATORS : [], demo && o.resources === null && config === null, host.request);
    if (plan.sensors.length === 0 && plan.actuators.length === 0) throw new SimulationInputError(nothingLeft(plan));
    const devices = o.devices > 1 ? fleet(target.url, o.devices, plan) : [{ target, plan, label: '' }];
    const restored = { count: 0 };
    const agents = devices.map((device) => {
      const dir = o.durableDir === null ? null : o.devices > 1 ? join(o.durableDir, device.target.publicKey) : o.durableDir;
      const storage = dir === null ? undefined : durableStorage(dir, `--durable ${o.durableDir}`, device.plan, queues);
      return createAgent({ ...host, storage, log: logTo(o.view, device) }, agentConfig(o, device));
    });
    // From here the agents own the storage: start() closes it when it fails, stop() when it ends.
    queues.length = 0;
    showStart(o, devices, service?.dashboard?.url ?? null);
    await startAll(agents, devices, restored);
    const running = service;
    return run(o, agents, restored, () => running?.close());
  } catch (e) {
    for (const q of queues) q.close();
    await service?.close();
    throw e;
  }
}

/** Why a plan without a sensor or an actuator is nothing to simulate: each resource named was skipped. */
function nothingLeft(plan: Plan): string {
  const why = plan.skipped.map((s) => `${s.resource} ${s.name}: ${s.reason}`).join('; ');
  return `nothing to simulate: every resource named was skipped (${why})`;
}

/** The demo fleet's first `n` devices at `url`, each planned like the first with its own resource ids. */
function fleet(url: string, n: number, plan: Plan): Device[] {
  const demo = demoFleetDevice(0);
  return Array.from({ length: n }, (_, k) => {
    const d = demoFleetDevice(k);
    const id = (resource: number): number => d.resources[demo.resources.indexOf(resource)];
    return {
      target: { url, publicKey: d.publicKey, token: d.token },
      plan: {
        sensors: plan.sensors.map((s) => ({ ...s, resource: id(s.resource) })),
        actuators: plan.actuators.map((a) => ({ ...a, resource: id(a.resource) })),
        skipped: plan.skipped.map((s) => ({ ...s, resource: id(s.resource) })),
        refused: plan.refused.map((r) => ({ ...r, resource: id(r.resource) })),
        unchecked: plan.unchecked,
      },
      label: `device ${k + 1}: `,
    };
  });
}

/**
 * The durable queue in `dir`, with the ledger that lets its counter sensors resume (their start is moved in
 * `plan`).
 */
function durableStorage(dir: string, flag: string, plan: Plan, opened: DurableQueue[]): QueueStorage {
  const q = asInput(flag, () => openDurableQueue(join(dir, 'queue')));
  opened.push(q);
  const counters = new Set(plan.sensors.filter((s) => s.spec.signal === 'counter').map((s) => s.resource));
  const ledger = asInput(flag, () => new CounterLedger(join(dir, 'counters.json'), counters, q));
  plan.sensors = plan.sensors.map((s) => (s.spec.signal === 'counter' ? { ...s, spec: { ...s.spec, start: ledger.resume(s.resource, s.spec.start) } } : s));
  return ledger.wrap(q);
}

function agentConfig(o: SimulationOptions, device: Device): AgentConfig {
  return {
    ...device.target,
    sensors: device.plan.sensors.map((s) => ({
      resource: s.resource,
      every: s.every,
      read: createSignal(s.spec, { now: () => performance.now(), random: Math.random }),
    })),
    reporting: device.plan.sensors.flatMap((s) => (s.report === undefined ? [] : [{ resource: s.resource, ...s.report }])),
    actuators: device.plan.actuators.map((a) => ({
      resource: a.resource,
      every: a.every,
      handle: (value, feed) =>
        o.view.event(`${device.label}command   ${label(a.resource, a.name)} <- ${JSON.stringify(value)} (feed ${feed.id_resource_feed})`, {
          type: 'command',
          ...fleetField(device),
          resource: a.resource,
          value,
          feed: feed.id_resource_feed,
        }),
    })),
    uplink: {
      ...SIM_UPLINK,
      // Ages are our extension (docs/interface.md): on against the local service, which takes them.
      sendAge: o.target === null,
      ...o.config?.uplink,
      ...(o.authRetryMs === null ? {} : { authRetryMs: o.authRetryMs }),
      ...(o.ages ? { sendAge: true } : {}),
    },
  };
}

/** A sensor's report-by-exception rule, as the start-up listing shows it. */
function describeReport(r: Report | undefined): string {
  if (r === undefined) return '';
  const parts = [
    r.deadband === undefined && r.deadbandPercent === undefined ? null : r.deadband === 0 && r.deadbandPercent === undefined ? 'on change' :
      'on a change of ' + [r.deadband === undefined ? null : String(r.deadband), r.deadbandPercent === undefined ? null : r.deadbandPercent + ' %'].filter((x) => x !== null).join(' or '),
    r.minIntervalMs === undefined ? null : 'at most every ' + r.minIntervalMs / 1000 + ' s',
    r.aggregate === undefined ? null : 'as the ' + r.aggregate,
    r.heartbeatMs === undefined ? null : 'heartbeat every ' + r.heartbeatMs / 1000 + ' s',
  ].filter((x) => x !== null);
  return ', reported ' + parts.join(', ');
}

function logTo(view: StatusView, device: Device): (level: LogLevel, message: string) => void {
  return (level, message) => {
    if (level !== 'debug') view.event(`${device.label}${level}: ${message}`, { type: 'log', ...fleetField(device), level, message });
  };
}

/** A fleet's events name their device by its public key. */
function fleetField(device: Device): { device?: string } {
  return device.label === '' ? {} : { device: device.target.publicKey };
}

/**
 * Starts every agent; if one cannot start, stops the others and fails with its reason (naming it in a
 * fleet). `restored` counts the samples an earlier run left in --durable: what each agent holds as it
 * starts, in memory and on disk, that it did not accept itself (nothing has left its queue yet).
 */
async function startAll(agents: Agent[], devices: Device[], restored: { count: number }): Promise<void> {
  const results = await Promise.allSettled(
    agents.map(async (agent) => {
      await agent.start();
      const s = agent.stats();
      restored.count += s.queued - s.accepted;
    }),
  );
  const failed = results.findIndex((r) => r.status === 'rejected');
  if (failed < 0) return;
  await Promise.all(agents.map((agent) => agent.stop({ flush: false })));
  const reason = (results[failed] as PromiseRejectedResult).reason as Error;
  if (devices.length === 1) throw reason;
  const device = devices[failed];
  const message = `${device.label}${device.target.publicKey}: ${reason.message}`;
  // A device or a resource the service does not have: it serves a smaller fleet, or none.
  const missing = reason instanceof ConfigError || (reason instanceof FeedError && reason.status === 404);
  if (!missing) throw new Error(message);
  throw new SimulationInputError(`${message} (a fleet of ${devices.length} needs feed-agent serve --demo-devices ${devices.length} or more)`);
}

/**
 * The config's sensors and actuators, named and checked against their resources' subtypes, then a sensor
 * (or a demo actuator) for every other resource named. One lookup (operation 2) reads them all.
 */
async function makePlan(
  target: Target,
  config: SimConfig | null,
  auto: number[],
  actuators: number[],
  demo: boolean,
  request: Host['request'],
): Promise<Plan> {
  const configured = [...(config?.sensors ?? []), ...(config?.actuators ?? [])].map((x) => x.resource);
  const ids = [...new Set([...auto, ...configured])];
  const client = new FeedClient(request, { baseUrl: target.url, publicKey: target.publicKey, token: target.token, timeoutMs: LOOKUP_TIMEOUT_MS });
  let resources: Resource[];
  try {
    resources = await client.getResources(ids);
  } catch (e) {
    // The config alone needs no lookup to run: the agent starts without the service and checks each reading.
    if (auto.length === 0 && e instanceof FeedError && e.retryable) {
      const unchecked = 'cannot read resources ' + ids.join(',') + ' now (' + e.message + '): the agent checks each reading once it can';
      return { sensors: config?.sensors ?? [], actuators: config?.actuators ?? [], skipped: [], refused: [], unchecked };
    }
    const message = 'cannot read resources ' + ids.join(',') + ' to plan and check their signals: ' + (e as Error).message;
    // A resource the device does not have is bad input, like a bad flag.
    throw e instanceof FeedError && e.status === 404 ? new SimulationInputError(message) : new Error(message);
  }
  const byId = new Map(resources.map((r) => [r.id_resource, r]));
  const named = <T extends { resource: number; name: string }>(x: T): T => ({ ...x, name: byId.get(x.resource)?.name ?? x.name });
  const sensors = (config?.sensors ?? []).map(named);
  const refused = sensors.flatMap((s) => {
    const subtype = byId.get(s.resource)?.subtype;
    const refusal = subtype === undefined ? null : refusedReadings(s.spec, s.every, subtype);
    return refusal === null ? [] : [{ resource: s.resource, name: s.name, ...refusal }];
  });
  const found = planFor(resources.filter((r) => auto.includes(r.id_resource)), actuators, demo);
  return {
    sensors: [...sensors, ...found.sensors],
    actuators: [...(config?.actuators ?? []).map(named), ...found.actuators],
    skipped: found.skipped,
    refused,
    unchecked: null,
  };
}

/** `restored`: the samples the agents found in --durable as they started, accepted by an earlier run. */
function run(o: SimulationOptions, agents: Agent[], restored: { count: number }, closeService: () => unknown): Simulation {
  const startedAt = performance.now();
  const stats = (): AgentStats => sumStats(agents.map((agent) => agent.stats()));
  const ticker = setInterval(() => o.view.update(stats(), performance.now(), startedAt), STATUS_INTERVAL_MS[o.view.mode]);
  let finish: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => (finish = resolve));
  let stopping = false;
  const stop = (reason: string): void => {
    if (stopping) return;
    stopping = true;
    clearTimeout(deadline);
    const queued = stats().queued;
    o.view.event(`stopping (${reason}): delivering ${queued} queued samples, for at most ${o.drainMs / 1000} s; a second Ctrl-C quits at once`, {
      type: 'stopping',
      reason,
      queued,
    });
    void Promise.all(agents.map((agent) => agent.stop({ flush: true, timeoutMs: o.drainMs }))).then(async (each) => {
      const final = sumStats(each);
      clearInterval(ticker);
      o.view.update(final, performance.now(), startedAt);
      await closeService();
      const ok = final.queued === 0 && final.droppedOverflow === 0 && !allRefused(final);
      const elapsedMs = Math.round(performance.now() - startedAt);
      const fleet = agents.length > 1 ? { devices: agents.length } : {};
      o.view.finish(summaryText(final, restored.count, ok, elapsedMs, o.durableDir), { type: 'summary', ok, elapsedMs, ...fleet, ...final, restored: restored.count });
      finish(ok ? 0 : 1);
    });
  };
  const deadline = o.durationMs === null ? undefined : setTimeout(() => stop('duration reached'), o.durationMs);
  return { done, stop, stats };
}

/**
 * The last words: what this run accepted and what an earlier one left in --durable (`restored`, on a line of
 * its own) add up to what was delivered, set aside, dropped and is still queued.
 */
function summaryText(s: AgentStats, restored: number, ok: boolean, elapsedMs: number, durableDir: string | null): string {
  const counts =
    `accepted ${s.accepted}${restored > 0 ? ` + restored ${restored}` : ''}, refused before queuing ${s.rejectedInvalid}, delivered ${s.sent}, ` +
    `set aside ${s.setAside}, dropped ${s.droppedOverflow}, still queued ${s.queued}`;
  const undelivered = s.queued + s.droppedOverflow;
  const verdict = allRefused(s)
    ? 'every reading was refused before queuing: nothing to deliver (the start lists why)'
    : ok
      ? 'every accepted sample was delivered or set aside'
      : `${undelivered} samples were not delivered` + (s.queued > 0 && durableDir !== null ? ` (the queued ones stay in ${durableDir} for the next run)` : '');
  const done = `done in ${(elapsedMs / 1000).toFixed(1)} s: ${counts}; ${verdict}`;
  return restored > 0 ? `restored ${restored} samples from ${durableDir}: accepted by an earlier run, not delivered before it ended\n${done}` : done;
}

/** Readings were taken and none was accepted: the run did nothing it was meant to. */
function allRefused(s: AgentStats): boolean {
  return s.accepted === 0 && s.rejectedInvalid > 0;
}

/**
 * The first device's plan (a fleet says how many devices follow it). `dashboard`: the page of the local
 * service started in this process; null against another service.
 */
function showStart(o: SimulationOptions, devices: Device[], dashboard: string | null): void {
  const { target, plan } = devices[0];
  const local = dashboard !== null;
  const who = devices.length === 1 ? `device ${target.publicKey}` : `${devices.length} devices of the demo fleet, the first ${target.publicKey},`;
  const lines = [
    `feed-agent simulate: ${who} at ${target.url}${local ? ' (local demo service, in this process)' : ''}` +
      (o.durableDir === null ? '' : `, durable queue${devices.length === 1 ? '' : 's'} in ${o.durableDir}`),
    ...(local ? [`  dashboard ${dashboard}  (charts, presence, and a control to command the actuators)`] : []),
    ...(devices.length === 1 ? [] : [`each device like the first, with its own resource ids (device k: the first's + 100·(k-1)):`]),
    ...plan.sensors.map((s) => `  sensor    ${label(s.resource, s.name)} ${describeSignal(s.spec)}, every ${s.every} ms${describeReport(s.report)}`),
    ...plan.actuators.map((a) => `  actuator  ${label(a.resource, a.name)} commands polled every ${a.every} ms`),
    ...plan.skipped.map((s) => `  skipped   ${label(s.resource, s.name)} ${s.reason}`),
    ...plan.refused.map((r) => `  refused   ${label(r.resource, r.name)} ${r.reason}`),
    ...(plan.unchecked === null ? [] : [`  unchecked ${plan.unchecked}`]),
    o.durationMs === null ? 'Ctrl-C stops: the queue is delivered first; a second Ctrl-C quits at once.' : `Runs for ${o.durationMs / 1000} s; Ctrl-C stops sooner.`,
  ];
  o.view.event(lines.join('\n'), {
    type: 'start',
    url: target.url,
    publicKey: target.publicKey,
    ...(devices.length === 1 ? {} : { devices: devices.length }),
    localService: local,
    dashboard,
    durable: o.durableDir,
    sensors: plan.sensors.map((s) => ({ resource: s.resource, name: s.name, every: s.every, ...s.spec, ...(s.report === undefined ? {} : { report: s.report }) })),
    actuators: plan.actuators,
    skipped: plan.skipped,
    refused: plan.refused,
    unchecked: plan.unchecked,
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
