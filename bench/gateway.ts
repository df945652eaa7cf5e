// A gateway at scale: 1, 10, 100 and 1,000 devices in one Node process, each its own agent, queue and
// host, all requests through one HTTP pool of at most 32 connections (docs/gateway.md), against
// `feed-agent serve --demo-devices N` in a child process. Each device samples one reading a second, with
// the uplink settings and the pool of `feed-agent simulate --devices` (a flush at least every 2 s).
//
// Each size runs in a fresh process (this bench again, told the size by CHILD), so that it starts from the
// same empty process: its CPU (% of one core) and RSS after gc, samples and requests per second, each the
// median of three windows. A process has fixed costs (code, compiled functions, buffers) that a few devices
// cannot be told apart from, so the cost of a device is the cost each added device brings: from 100 to
// 1,000 devices, beside the same from 10 to 100 as the baseline. Linear growth keeps the two equal.
import { createAgent } from '../src/core/agent';
import { createNodeHost } from '../platforms/node/host';
import { createHttp } from '../platforms/node/http';
import { demoFleetDevice } from '../src/service';
import { FLEET_CONNECTIONS, SIM_UPLINK } from '../src/sim/simulator';
import { sumStats } from '../src/sim/status';
import { format, median, round, sleep } from './measure';
import { runSection } from './section';
import type { BenchSection } from './section';
import { serve } from './serve';

const SIZES = [1, 10, 100, 1000];
const WARMUP_MS = 3000;
const WINDOW_MS = 4000;
const RUNS = 3;
/** The environment variable that makes this section measure one size, in a child process. */
const CHILD = 'FEED_AGENT_BENCH_GATEWAY_DEVICES';
const KEYS = ['cpuPct', 'rssKb', 'samplesPerSecond', 'requestsPerSecond'] as const;

type Load = Record<(typeof KEYS)[number], number>;

/** RSS once the garbage collector ran (the bench runs with --expose-gc). */
function rss(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().rss;
}

/** What `devices` agents cost this process. */
async function measure(devices: number): Promise<Load> {
  const service = await serve(['--demo-devices', String(devices)]);
  const request = createHttp({ connections: FLEET_CONNECTIONS });
  const agents = Array.from({ length: devices }, (_, k) => {
    const d = demoFleetDevice(k);
    return createAgent({ ...createNodeHost(), request }, {
      url: service.url,
      publicKey: d.publicKey,
      token: d.token,
      // The device's air temperature (its second resource), once a second.
      sensors: [{ resource: d.resources[1], every: 1000, read: () => 21.5 }],
      uplink: { ...SIM_UPLINK, startJitterMs: SIM_UPLINK.flushMs },
    });
  });
  const totals = () => sumStats(agents.map((agent) => agent.stats()));
  try {
    await Promise.all(agents.map((agent) => agent.start()));
    await sleep(WARMUP_MS);
    const windows: Load[] = [];
    for (let i = 0; i < RUNS; i++) {
      const start = totals();
      const cpu = process.cpuUsage();
      const t0 = performance.now();
      await sleep(WINDOW_MS);
      const seconds = (performance.now() - t0) / 1000;
      const used = process.cpuUsage(cpu);
      const end = totals();
      windows.push({
        cpuPct: ((used.user + used.system) / 1e6 / seconds) * 100,
        rssKb: rss() / 1024,
        samplesPerSecond: (end.accepted - start.accepted) / seconds,
        requestsPerSecond: (end.requests - start.requests) / seconds,
      });
    }
    return Object.fromEntries(KEYS.map((key) => [key, median(windows.map((w) => w[key]))])) as Load;
  } finally {
    await Promise.all(agents.map((agent) => agent.stop({ flush: false })));
    await service.stop();
  }
}

/** One size, measured in a process of its own. */
function inChild(devices: number): Load {
  const { figures } = runSection('gateway', { [CHILD]: String(devices) });
  return Object.fromEntries(KEYS.map((key) => [key, figures['gateway.child.' + key]])) as Load;
}

export async function benchGateway(): Promise<BenchSection> {
  const own = process.env[CHILD];
  if (own !== undefined) {
    const load = await measure(Number(own));
    return { title: `Gateway, ${own} devices`, rows: [], figures: Object.fromEntries(KEYS.map((key) => ['gateway.child.' + key, load[key]])) };
  }
  const loads = new Map(SIZES.map((devices) => [devices, inChild(devices)]));
  const added = (key: 'cpuPct' | 'rssKb', from: number, to: number) => (loads.get(to)![key] - loads.get(from)![key]) / (to - from);
  const figures = {
    'gateway.cpuPerDevicePct': round(added('cpuPct', 100, 1000), 4),
    'gateway.baselineCpuPerDevicePct': round(added('cpuPct', 10, 100), 4),
    'gateway.rssPerDeviceKb': round(added('rssKb', 100, 1000), 1),
    'gateway.baselineRssPerDeviceKb': round(added('rssKb', 10, 100), 1),
    'gateway.samplesPerSecond': round(loads.get(1000)!.samplesPerSecond, 1),
    'gateway.requestsPerSecond': round(loads.get(1000)!.requestsPerSecond, 1),
  };
  const header = '  devices   CPU (% of a core)   RSS after gc   samples/s   requests/s';
  const lines = [...loads].map(([devices, l]) =>
    '  ' + format(devices).padStart(7) + (format(round(l.cpuPct, 2)) + ' %').padStart(20) + (format(round(l.rssKb / 1024, 1)) + ' MB').padStart(15) +
    format(round(l.samplesPerSecond, 1)).padStart(12) + format(round(l.requestsPerSecond, 1)).padStart(13),
  );
  return {
    title: 'Gateway: N devices in one process, one reading a second each, one HTTP pool (baseline: the same from 10 to 100 devices)',
    rows: [
      { label: 'CPU per added device, 100 to 1,000 devices (% of one core)', value: figures['gateway.cpuPerDevicePct'], baseline: figures['gateway.baselineCpuPerDevicePct'], unit: '%' },
      { label: 'RSS per added device, 100 to 1,000 devices', value: figures['gateway.rssPerDeviceKb'], baseline: figures['gateway.baselineRssPerDeviceKb'], unit: 'KB' },
    ],
    table: [header, ...lines],
    figures,
  };
}
