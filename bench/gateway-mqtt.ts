// The gateway's MQTT runs (docs/gateway.md): where its throughput stops (saturation), kill -9 under load,
// and the side-by-side with Node-RED. Each starts its own broker, service and publisher (bench/gateway-rig.ts) and the bridge as a
// child process, then matches what the service stored against what the broker acknowledged.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { createRandom } from '../src/core/host/random';
import { demoFleetDevice } from '../src/service';
import { gatewayProcess, nodeRedProcess } from './bridge-process';
import type { BridgeProcess } from './bridge-process';
import { drained, FIRST_ID, fleetSeed, fleetTopics, publish, ServiceProcess, tally } from './gateway-rig';
import type { Fleet, Tally } from './gateway-rig';
import { sleep } from './measure';
import { startBroker } from './mqtt-broker';
import type { Broker } from './mqtt-broker';
import { topicOf } from './mqtt-publisher';
import { nodeRedScript } from './node-red-install';

/**
 * A device's queue in memory in the bench: the gateway's default, or FEED_AGENT_BENCH_GATEWAY_QUEUE, to
 * see what another size costs and gives (docs/gateway.md).
 */
export const BENCH_DEVICE_QUEUE = process.env.FEED_AGENT_BENCH_GATEWAY_QUEUE === undefined ? undefined : Number(process.env.FEED_AGENT_BENCH_GATEWAY_QUEUE);

/** Today's design, the baseline: the queue in memory of 1,024 readings the gateway had before the backlog. */
export const TODAY_QUEUE = 1024;

export interface Run {
  work: string;
  root: string;
  cli: string;
}

/** The gateway's config file for `fleet` (tokens from the environment it returns). */
function gatewayConfig(work: string, broker: Broker, service: ServiceProcess, fleet: Fleet, requestsPerSecond: number, queue: number | undefined): { file: string; env: Record<string, string> } {
  const env: Record<string, string> = {};
  const devices = Array.from({ length: fleet.devices }, (_, d) => {
    env['BENCH_TOKEN_' + d] = demoFleetDevice(d).token;
    return {
      name: 'd' + d,
      publicKey: demoFleetDevice(d).publicKey,
      tokenEnv: 'BENCH_TOKEN_' + d,
      ...(queue === undefined ? {} : { queue }),
      resources: Array.from({ length: fleet.perDevice }, (_, r) => {
        const k = d * fleet.perDevice + r;
        return { id: FIRST_ID + k, mqtt: { topic: topicOf(k) } };
      }),
    };
  });
  const config = {
    service: { url: service.url, requestsPerSecond },
    queue: { dir: join(work, 'queues'), fsync: 'interval', fsyncIntervalMs: 1000 },
    mqtt: { url: broker.url, clientId: 'bench-gateway', subscribe: ['bench/#'] },
    status: { everyS: 0 },
    metrics: false,
    devices,
  };
  const file = join(work, 'gateway.json');
  writeFileSync(file, JSON.stringify(config, null, 2));
  return { file, env };
}

interface Plan {
  fleet: Fleet;
  rate: number;
  durationMs: number;
  /** What happens to the bridge and the service while the publisher runs. */
  faults: (bridge: BridgeProcess, service: ServiceProcess) => Promise<void>;
  drainMs: number;
}

export interface Outcome extends Tally {
  /** Acknowledged messages a second, over the publisher's time and the time the last stores came after it. */
  throughput: number;
  broker: Broker['kind'];
}

async function runPlan(run: Run, name: string, plan: Plan, bridgeFor: (work: string, broker: Broker, service: ServiceProcess) => BridgeProcess): Promise<Outcome> {
  const work = join(run.work, name);
  mkdirSync(work, { recursive: true });
  const epoch = Date.now();
  const broker = await startBroker(work, run.root);
  const service = await ServiceProcess.create(work, fleetSeed(plan.fleet), epoch);
  let bridge: BridgeProcess | null = null;
  try {
    await service.start();
    bridge = bridgeFor(work, broker, service);
    await bridge.start();
    const published = publish({ broker, topics: fleetTopics(plan.fleet), rate: plan.rate, durationMs: plan.durationMs, epoch, out: join(work, 'published.json') });
    await plan.faults(bridge, service);
    const acked = await published;
    const publishedAt = performance.now();
    const expected = acked.acked.reduce((n, values) => n + values.length, 0);
    const lastStored = await drained(service, expected, plan.drainMs);
    // The publisher's own time, and how long the last stores came after it ended.
    const seconds = acked.seconds + Math.max(0, lastStored - publishedAt) / 1000;
    await bridge.stop();
    await service.stop();
    const outcome = tally(acked, service.stored(plan.fleet), service.seen());
    return { ...outcome, throughput: outcome.published / seconds, broker: broker.kind };
  } finally {
    await bridge?.stop();
    await service.stop();
    await broker.stop();
  }
}

const gatewayBridge = (run: Run, fleet: Fleet, requestsPerSecond: number, queue = BENCH_DEVICE_QUEUE) => (work: string, broker: Broker, service: ServiceProcess) => {
  const { file, env } = gatewayConfig(work, broker, service, fleet, requestsPerSecond, queue);
  return gatewayProcess(run.cli, file, env);
};

/** The offered rates tried: from the 20,000 msg/s up, a step at a time; a step between the last held and the first not held. */
export const SATURATION_FROM = 20_000;
const SATURATION_STEP = 4000;
/** A rate is held when the oldest reading the service stored was younger than this, none lost. */
export const SATURATION_MAX_AGE_MS = 5000;
/** The step whose run gives the figures of before (`gateway.mqttMessagesPerSecond`: the publisher's rate, offered 24,000). */
export const THROUGHPUT_RATE = 24_000;
/** The publisher cannot offer more than this (one mqtt.js client): a rate it fell short of by more than 3 % is not tried further. */
const OFFERED_SHORTFALL = 0.97;

export interface Step {
  rate: number;
  queue: string;
  outcome: Outcome;
  held: boolean;
}

export interface Saturation {
  /**
   * The highest rate held, as the publisher offered it, per design (0: not even SATURATION_FROM − a step);
   * `capped` when the publisher could offer no more, so the limit is higher than that.
   */
  limit: number;
  todayLimit: number;
  capped: boolean;
  steps: Step[];
}

/**
 * Where the gateway stops: 100 devices of one topic each, offered `rate` msg/s for 60 s (10 s short),
 * from SATURATION_FROM up until a rate is not held, then the rate between the last held and it. Each
 * rate runs twice, the gateway as it is and today's design (queues of TODAY_QUEUE), in turn.
 */
export async function saturation(run: Run, short: boolean): Promise<Saturation> {
  const fleet = { devices: 100, perDevice: 1 };
  const durationMs = short ? 10_000 : 60_000;
  const steps: Step[] = [];
  const designs = [{ name: String(BENCH_DEVICE_QUEUE ?? 'default'), queue: BENCH_DEVICE_QUEUE }, { name: String(TODAY_QUEUE), queue: TODAY_QUEUE }];
  const held = new Map<string, number>();
  const failed = new Map<string, number>();
  let capped = false;
  const attempt = async (rate: number, design: (typeof designs)[number]): Promise<void> => {
    const outcome = await runPlan(run, `saturation-${rate}-${design.name}`, { fleet, rate, durationMs, faults: async () => {}, drainMs: 60_000 }, gatewayBridge(run, fleet, 2000, design.queue));
    const ok = outcome.lost === 0 && outcome.maxAgeMs < SATURATION_MAX_AGE_MS;
    steps.push({ rate, queue: design.name, outcome, held: ok });
    if (outcome.publishedPerSecond < rate * OFFERED_SHORTFALL) capped = true;
    // The rate offered is what the publisher kept up, a little under the rate asked for.
    if (ok) held.set(design.name, Math.max(held.get(design.name) ?? 0, outcome.publishedPerSecond));
    else failed.set(design.name, Math.min(failed.get(design.name) ?? Infinity, rate));
  };
  // A first run, not counted: the bench's first broker, service and gateway start cold (two runs of 26 Nov:
  // the first rate's first run kept its oldest reading 5.6 s, its second, the same config, 1.3 s).
  await runPlan(run, 'saturation-warm-up', { fleet, rate: SATURATION_FROM, durationMs: 10_000, faults: async () => {}, drainMs: 60_000 }, gatewayBridge(run, fleet, 2000));
  for (let rate = SATURATION_FROM; !capped && designs.some((d) => !failed.has(d.name)); rate += SATURATION_STEP) {
    for (const d of designs) if (!failed.has(d.name)) await attempt(rate, d);
  }
  // Between the last rate held and the first not held.
  for (const d of designs) {
    const between = (held.get(d.name) ?? SATURATION_FROM - SATURATION_STEP) + SATURATION_STEP / 2;
    if (failed.has(d.name) && between < (failed.get(d.name) as number) && between > 0) await attempt(between, d);
  }
  return { limit: held.get(designs[0].name) ?? 0, todayLimit: held.get(designs[1].name) ?? 0, capped, steps };
}

/** kill -9 of the gateway at random instants under 5,000 msg/s, restarted each time: 20 kills (3 short). */
export function kills(run: Run, short: boolean): Promise<Outcome & { kills: number }> {
  const fleet = { devices: 100, perDevice: 1 };
  const count = short ? 3 : 20;
  const random = createRandom(20261125);
  // Each kill comes 1 to 3 s after the gateway is back: 2 s on average.
  const durationMs = count * 2600 + 2000;
  let done = 0;
  const faults = async (bridge: BridgeProcess) => {
    for (; done < count; done++) {
      await sleep(1000 + random() * 2000);
      await bridge.kill();
      await bridge.start();
    }
  };
  return runPlan(run, 'kills', { fleet, rate: 5000, durationMs, faults, drainMs: 60_000 }, gatewayBridge(run, fleet, 1000)).then((o) => ({ ...o, kills: done }));
}

/**
 * The comparison with Node-RED: 1,000 msg/s over 100 topics (one device of 100 resources, so one
 * operation-4 URL serves a batch), the service down for 30 s (10 s short), then the bridge killed with
 * kill -9 once and started again.
 */
export function comparison(run: Run, short: boolean, bridge: 'gateway' | 'node-red'): Promise<Outcome> {
  const fleet = { devices: 1, perDevice: 100 };
  const outageMs = short ? 10_000 : 30_000;
  const faults = async (b: BridgeProcess, service: ServiceProcess) => {
    await sleep(5000);
    await service.stop();
    await sleep(outageMs);
    await service.start();
    await sleep(5000);
    await b.kill();
    await sleep(1000);
    await b.start();
  };
  const plan = { fleet, rate: 1000, durationMs: outageMs + 20_000, faults, drainMs: 90_000 };
  const device = demoFleetDevice(0);
  // Installed, if need be, before anything of the run starts.
  const red = bridge === 'node-red' ? nodeRedScript() : '';
  const nodeRed = (work: string, broker: Broker, service: ServiceProcess) =>
    nodeRedProcess(red, join(work, 'node-red'), {
      BENCH_BROKER_HOST: '127.0.0.1',
      BENCH_BROKER_PORT: new URL(broker.url).port,
      BENCH_SERVICE_URL: service.url,
      BENCH_PUBLIC_KEY: device.publicKey,
      BENCH_TOKEN: device.token,
    });
  return runPlan(run, 'compare-' + bridge, plan, bridge === 'gateway' ? gatewayBridge(run, fleet, 50) : nodeRed);
}
