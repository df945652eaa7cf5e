// The gateway's MQTT runs (docs/gateway.md): throughput, kill -9 under load, and the side-by-side with
// Node-RED. Each starts its own broker, service and publisher (bench/gateway-rig.ts) and the bridge as a
// child process, then matches what the service stored against what the broker acknowledged.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { createRandom } from '../src/core/random';
import { demoFleetDevice } from '../src/service';
import { gatewayProcess, nodeRedProcess } from './bridge-process';
import type { BridgeProcess } from './bridge-process';
import { drained, FIRST_ID, fleetSeed, fleetTopics, publish, ServiceProcess, tally } from './gateway-rig';
import type { Fleet, Tally } from './gateway-rig';
import { sleep } from './measure';
import { startBroker } from './mqtt-broker';
import type { Broker } from './mqtt-broker';
import { topicOf } from './mqtt-publisher';

/**
 * A device's queue capacity in the bench (the gateway's default, 1024), or FEED_AGENT_BENCH_GATEWAY_QUEUE:
 * the memory part with a smaller one shows what capacity costs (docs/gateway.md).
 */
export const BENCH_DEVICE_QUEUE = Number(process.env.FEED_AGENT_BENCH_GATEWAY_QUEUE ?? 1024);

export interface Run {
  work: string;
  root: string;
  cli: string;
}

/** The gateway's config file for `fleet` (tokens from the environment it returns). */
function gatewayConfig(work: string, broker: Broker, service: ServiceProcess, fleet: Fleet, requestsPerSecond: number): { file: string; env: Record<string, string> } {
  const env: Record<string, string> = {};
  const devices = Array.from({ length: fleet.devices }, (_, d) => {
    env['BENCH_TOKEN_' + d] = demoFleetDevice(d).token;
    return {
      name: 'd' + d,
      publicKey: demoFleetDevice(d).publicKey,
      tokenEnv: 'BENCH_TOKEN_' + d,
      queue: BENCH_DEVICE_QUEUE,
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

const gatewayBridge = (run: Run, fleet: Fleet, requestsPerSecond: number) => (work: string, broker: Broker, service: ServiceProcess) => {
  const { file, env } = gatewayConfig(work, broker, service, fleet, requestsPerSecond);
  return gatewayProcess(run.cli, file, env);
};

/**
 * Offered above the 20,000 msg/s, so that the figure says whether the gateway keeps up past it: a
 * gateway that cannot leaves a backlog in the broker, and the time to store it counts.
 */
export const THROUGHPUT_RATE = 24_000;

/** THROUGHPUT_RATE over 100 devices of one topic each, for 60 s (10 s short). */
export function throughput(run: Run, short: boolean): Promise<Outcome> {
  const fleet = { devices: 100, perDevice: 1 };
  const durationMs = short ? 10_000 : 60_000;
  return runPlan(run, 'throughput', { fleet, rate: THROUGHPUT_RATE, durationMs, faults: async () => {}, drainMs: 60_000 }, gatewayBridge(run, fleet, 2000));
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
  const nodeRed = (work: string, broker: Broker, service: ServiceProcess) =>
    nodeRedProcess(join(work, 'node-red'), {
      BENCH_BROKER_HOST: '127.0.0.1',
      BENCH_BROKER_PORT: new URL(broker.url).port,
      BENCH_SERVICE_URL: service.url,
      BENCH_PUBLIC_KEY: device.publicKey,
      BENCH_TOKEN: device.token,
    });
  return runPlan(run, 'compare-' + bridge, plan, bridge === 'gateway' ? gatewayBridge(run, fleet, 50) : nodeRed);
}
