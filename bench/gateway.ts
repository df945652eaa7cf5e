// A gateway at scale: 1, 10, 100 and 1,000 devices in one Node process, each its own agent, queue and
// host, all requests through one HTTP pool of at most 32 connections (docs/gateway.md), against
// `feed-agent serve --demo-devices N` in a child process. Each device samples one reading a second, with
// the uplink settings and the pool of `feed-agent simulate --devices` (a flush at least every 2 s). Per
// size: CPU per device (% of one core), RSS per device, samples and requests per second, each the median
// of three windows. The baseline of the 1,000-device figures is the same measure at 10 devices: linear
// growth keeps them equal.
import { createAgent } from '../src/core/agent';
import type { Agent } from '../src/core/agent';
import { createNodeHost } from '../platforms/node/host';
import { createHttp } from '../platforms/node/http';
import { demoFleetDevice } from '../src/service';
import { FLEET_CONNECTIONS, SIM_UPLINK } from '../src/sim/simulator';
import { format, median, round, sleep } from './measure';
import type { BenchSection } from './section';
import { serve } from './serve';

const SIZES = [1, 10, 100, 1000];
const WARMUP_MS = 3000;
const WINDOW_MS = 4000;
const RUNS = 3;

interface Scale {
  devices: number;
  cpuPerDevicePct: number;
  rssPerDeviceKb: number;
  samplesPerSecond: number;
  requestsPerSecond: number;
}

/** RSS once the garbage collector ran (the bench runs with --expose-gc). */
function rss(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().rss;
}

function totals(agents: Agent[]): { accepted: number; requests: number } {
  let accepted = 0, requests = 0;
  for (const agent of agents) {
    const s = agent.stats();
    accepted += s.accepted;
    requests += s.requests;
  }
  return { accepted, requests };
}

async function measure(devices: number): Promise<Scale> {
  const service = await serve(['--demo-devices', String(devices)]);
  const request = createHttp({ connections: FLEET_CONNECTIONS });
  // One request first, so that what HTTP loads on first use is not counted against the devices.
  await request({ method: 'GET', url: service.url + '/api/device/' + demoFleetDevice(0).publicKey + '/resource/101', headers: {}, timeoutMs: 10_000 });
  const before = rss();
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
  try {
    await Promise.all(agents.map((agent) => agent.start()));
    await sleep(WARMUP_MS);
    const windows: Omit<Scale, 'devices'>[] = [];
    for (let i = 0; i < RUNS; i++) {
      const start = totals(agents);
      const cpu = process.cpuUsage();
      const t0 = performance.now();
      await sleep(WINDOW_MS);
      const seconds = (performance.now() - t0) / 1000;
      const used = process.cpuUsage(cpu);
      const end = totals(agents);
      windows.push({
        cpuPerDevicePct: ((used.user + used.system) / 1e6 / seconds / devices) * 100,
        rssPerDeviceKb: (rss() - before) / 1024 / devices,
        samplesPerSecond: (end.accepted - start.accepted) / seconds,
        requestsPerSecond: (end.requests - start.requests) / seconds,
      });
    }
    const of = (key: keyof Omit<Scale, 'devices'>) => median(windows.map((w) => w[key]));
    return {
      devices,
      cpuPerDevicePct: round(of('cpuPerDevicePct'), 4),
      rssPerDeviceKb: round(of('rssPerDeviceKb'), 1),
      samplesPerSecond: round(of('samplesPerSecond'), 1),
      requestsPerSecond: round(of('requestsPerSecond'), 1),
    };
  } finally {
    await Promise.all(agents.map((agent) => agent.stop({ flush: false })));
    await service.stop();
  }
}

export async function benchGateway(): Promise<BenchSection> {
  const scales: Scale[] = [];
  for (const devices of SIZES) scales.push(await measure(devices));
  const at = (devices: number) => scales.find((s) => s.devices === devices)!;
  const largest = at(1000), small = at(10);
  const header = '  devices   CPU per device   RSS per device   samples/s   requests/s';
  const lines = scales.map((s) =>
    '  ' + format(s.devices).padStart(7) + (s.cpuPerDevicePct.toFixed(4) + ' %').padStart(17) + (format(s.rssPerDeviceKb) + ' KB').padStart(17) +
    format(s.samplesPerSecond).padStart(12) + format(s.requestsPerSecond).padStart(13),
  );
  return {
    title: 'Gateway: N devices in one process, one reading a second each, one HTTP pool (baseline: the same per device at 10 devices)',
    rows: [
      { label: 'CPU per device at 1,000 devices (% of one core)', value: largest.cpuPerDevicePct, baseline: small.cpuPerDevicePct, unit: '%' },
      { label: 'RSS per device at 1,000 devices', value: largest.rssPerDeviceKb, baseline: small.rssPerDeviceKb, unit: 'KB' },
    ],
    table: [header, ...lines],
    figures: {
      'gateway.cpuPerDevicePct': largest.cpuPerDevicePct,
      'gateway.baselineCpuPerDevicePct': small.cpuPerDevicePct,
      'gateway.rssPerDeviceKb': largest.rssPerDeviceKb,
      'gateway.baselineRssPerDeviceKb': small.rssPerDeviceKb,
      'gateway.samplesPerSecond': largest.samplesPerSecond,
      'gateway.requestsPerSecond': largest.requestsPerSecond,
    },
  };
}
