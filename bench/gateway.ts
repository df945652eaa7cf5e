// The gateway box (docs/gateway.md). Its parts, each alone with FEED_AGENT_BENCH_GATEWAY_PARTS (a comma list
// of memory, append, throughput, kills, compare; all by default), and shorter with
// FEED_AGENT_BENCH_GATEWAY_SHORT=1 (for development: the figures are not the documented ones):
// - memory: 1, 10, 100 and 1,000 devices in one Node process, each its own agent, durable queue and
//   host, all requests through one HTTP pool of at most 32 connections, against
//   `feed-agent serve --demo-devices N` in a child process. Each device samples one reading a second, with
//   the uplink settings and the pool of `feed-agent simulate --devices` (a flush at least every 2 s), and
//   the bench's per-device queue (BENCH_DEVICE_QUEUE: 1024, or FEED_AGENT_BENCH_GATEWAY_QUEUE);
// - append: the durable queue's fsync policies (bench/durable-append.ts);
// - throughput, kills, compare: `feed-agent gateway` between a broker and the service (bench/gateway-mqtt.ts).
//
// Each size runs in a fresh process (this bench again, told the size by CHILD), so that it starts from the
// same empty process: its CPU (% of one core) and RSS after gc, samples and requests per second, each the
// median of three windows. A process has fixed costs (code, compiled functions, buffers) that a few devices
// cannot be told apart from, so the cost of a device is the cost each added device brings: from 100 to
// 1,000 devices, beside the same from 10 to 100 as the baseline. Linear growth keeps the two equal.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { createAgent } from '../src/core/agent';
import { openDurableQueue } from '../platforms/node/durable-queue';
import { createNodeHost } from '../platforms/node/host';
import { createHttp } from '../platforms/node/http';
import { demoFleetDevice } from '../src/service';
import { FLEET_CONNECTIONS, SIM_UPLINK } from '../src/sim/simulator';
import { sumStats } from '../src/sim/status';
import { measureAppends } from './durable-append';
import { playRole, ROLE_ENV } from './gateway-rig';
import { BENCH_DEVICE_QUEUE, comparison, kills, throughput, THROUGHPUT_RATE } from './gateway-mqtt';
import type { Outcome } from './gateway-mqtt';
import { format, median, round, sleep } from './measure';
import { runSection } from './section';
import type { BenchRow, BenchSection } from './section';
import { cli, serve } from './serve';
import { ROOT, workDir } from '../test/support/build';

const SIZES = [1, 10, 100, 1000];
const WARMUP_MS = 3000;
const WINDOW_MS = 4000;
const RUNS = 3;
/** The environment variable that makes this section measure one size, in a child process. */
const CHILD = 'FEED_AGENT_BENCH_GATEWAY_DEVICES';
const PARTS = ['memory', 'append', 'throughput', 'kills', 'compare'] as const;
const short = process.env.FEED_AGENT_BENCH_GATEWAY_SHORT === '1';
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
  const queues = mkdtempSync(join(tmpdir(), 'feed-agent-gateway-bench-'));
  const agents = Array.from({ length: devices }, (_, k) => {
    const d = demoFleetDevice(k);
    return createAgent({ ...createNodeHost({ storage: openDurableQueue(join(queues, String(k))) }), request }, {
      url: service.url,
      publicKey: d.publicKey,
      token: d.token,
      // The device's air temperature (its second resource), once a second.
      sensors: [{ resource: d.resources[1], every: 1000, read: () => 21.5 }],
      uplink: { ...SIM_UPLINK, startJitterMs: SIM_UPLINK.flushMs, queue: BENCH_DEVICE_QUEUE },
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
    rmSync(queues, { recursive: true, force: true });
  }
}

/** One size, measured in a process of its own. */
function inChild(devices: number): Load {
  const { figures } = runSection('gateway', { [CHILD]: String(devices) });
  return Object.fromEntries(KEYS.map((key) => [key, figures['gateway.child.' + key]])) as Load;
}

export async function benchGateway(): Promise<BenchSection> {
  const role = process.env[ROLE_ENV];
  if (role !== undefined) return playRole(role);
  const own = process.env[CHILD];
  if (own !== undefined) {
    const load = await measure(Number(own));
    return { title: `Gateway, ${own} devices`, rows: [], figures: Object.fromEntries(KEYS.map((key) => ['gateway.child.' + key, load[key]])) };
  }
  const parts = new Set(process.env.FEED_AGENT_BENCH_GATEWAY_PARTS?.split(',') ?? PARTS);
  const sections: BenchSection[] = [];
  if (parts.has('memory')) sections.push(memory());
  if (parts.has('append')) sections.push(await appends());
  const mqtt = PARTS.slice(2).filter((part) => parts.has(part));
  if (mqtt.length > 0) sections.push(await bridges(new Set(mqtt)));
  return {
    title: sections.map((s) => s.title).join('; '),
    note: short ? 'SHORT MODE (FEED_AGENT_BENCH_GATEWAY_SHORT=1): not the documented figures' : undefined,
    rows: sections.flatMap((s) => s.rows),
    table: sections.flatMap((s) => s.table ?? []),
    figures: Object.assign({}, ...sections.map((s) => s.figures)) as Record<string, number>,
  };
}

function memory(): BenchSection {
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
    title: `Gateway: N devices in one process, one reading a second each, durable queues of ${BENCH_DEVICE_QUEUE} samples, one HTTP pool (baseline: the same from 10 to 100 devices)`,
    rows: [
      { label: 'CPU per added device, 100 to 1,000 devices (% of one core)', value: figures['gateway.cpuPerDevicePct'], baseline: figures['gateway.baselineCpuPerDevicePct'], unit: '%' },
      { label: 'RSS per added device, 100 to 1,000 devices', value: figures['gateway.rssPerDeviceKb'], baseline: figures['gateway.baselineRssPerDeviceKb'], unit: 'KB' },
    ],
    table: [header, ...lines],
    figures,
  };
}

async function appends(): Promise<BenchSection> {
  const a = await measureAppends(short);
  const figures = {
    'gateway.durable.appendUsAlways': round(a.alwaysUs, 2),
    'gateway.durable.appendUsGrouped': round(a.groupedUs, 2),
    'gateway.durable.appendUsNever': round(a.neverUs, 2),
    'gateway.durable.windowRecordsFast': a.fastWindowRecords,
    'gateway.durable.windowMsFast': round(a.fastWindowMs, 1),
    'gateway.durable.windowRecordsSlow': a.slowWindowRecords,
    'gateway.durable.windowMsSlow': round(a.slowWindowMs, 1),
  };
  return {
    title: 'Durable queue: one append (baseline: a sync per record) and the power-cut window of grouped syncs (1 s or 1,000 records)',
    rows: [
      { label: 'append, syncs grouped (interval, the default)', value: figures['gateway.durable.appendUsGrouped'], baseline: figures['gateway.durable.appendUsAlways'], unit: 'µs' },
      { label: 'append, never synced', value: figures['gateway.durable.appendUsNever'], unit: 'µs' },
      { label: 'window at full speed: most records unsynced', value: a.fastWindowRecords, unit: 'records' },
      { label: 'window at full speed: longest unsynced', value: figures['gateway.durable.windowMsFast'], unit: 'ms' },
      { label: `window at ${a.slowRate} appends/s: most records unsynced`, value: a.slowWindowRecords, unit: 'records' },
      { label: `window at ${a.slowRate} appends/s: longest unsynced`, value: figures['gateway.durable.windowMsSlow'], unit: 'ms' },
    ],
    figures,
  };
}

/** The MQTT runs, each against a fresh broker, service and gateway (or Node-RED). */
async function bridges(parts: Set<string>): Promise<BenchSection> {
  const work = workDir('bench-gateway-');
  try {
    const run = { work: work.dir, root: ROOT, cli: cli() };
    const rows: BenchRow[] = [];
    const figures: Record<string, number> = {};
    const table: string[] = [];
    // Until the gateway command is built, only Node-RED's side of the comparison runs.
    const gateway = spawnSync(process.execPath, [run.cli, 'gateway', '--help'], { stdio: 'ignore' }).status === 0;
    if (!gateway) {
      table.push('  feed-agent gateway is not in this build: its runs are skipped');
      for (const part of ['throughput', 'kills']) parts.delete(part);
    }
    const describe = (name: string, o: Outcome) =>
      `  ${name}: ${format(o.published)} acknowledged by ${o.broker}, lost ${o.lost}, duplicates ${o.duplicates}, ` +
      `stored unacknowledged ${o.unacknowledgedStored}, oldest ${format(round(o.maxAgeMs / 1000, 1))} s, ${format(round(o.throughput))} msg/s`;
    if (parts.has('throughput')) {
      const o = await throughput(run, short);
      Object.assign(figures, {
        'gateway.mqttMessagesPerSecond': round(o.throughput),
        'gateway.mqttPublishedPerSecond': round(o.publishedPerSecond),
        'gateway.mqttLost': o.lost,
        'gateway.mqttDuplicates': o.duplicates,
        'gateway.mqttMaxAgeMs': round(o.maxAgeMs),
        'gateway.mosquitto': o.broker === 'mosquitto' ? 1 : 0,
      });
      rows.push({ label: `MQTT messages/s into the service (offered ${format(THROUGHPUT_RATE)}/s)`, value: figures['gateway.mqttMessagesPerSecond'], unit: 'msg/s' });
      table.push(describe('throughput', o));
    }
    if (parts.has('kills')) {
      const o = await kills(run, short);
      Object.assign(figures, { 'gateway.killLost': o.lost, 'gateway.killDuplicates': o.duplicates, 'gateway.kills': o.kills, 'gateway.killMaxAgeMs': round(o.maxAgeMs) });
      rows.push({ label: `lost across ${o.kills} kill -9 at 5,000 msg/s`, value: o.lost, unit: 'messages' });
      table.push(describe(`${o.kills} kills`, o));
    }
    if (parts.has('compare')) {
      const red = await comparison(run, short, 'node-red');
      table.push(describe('Node-RED', red));
      if (gateway) {
        const ours = await comparison(run, short, 'gateway');
        Object.assign(figures, { 'gateway.lost': ours.lost, 'gateway.duplicates': ours.duplicates, 'gateway.maxAgeMs': round(ours.maxAgeMs) });
        rows.push({ label: 'lost: service down, then kill -9 (baseline: Node-RED)', value: ours.lost, baseline: red.lost, unit: 'messages' });
        table.push(describe('gateway', ours));
      }
      Object.assign(figures, {
        'gateway.nodeRed.lost': red.lost,
        'gateway.nodeRed.duplicates': red.duplicates,
        'gateway.nodeRed.maxAgeMs': round(red.maxAgeMs),
        'gateway.nodeRed.published': red.published,
      });
    }
    return { title: 'Gateway over MQTT', rows, table, figures };
  } finally {
    work.remove();
  }
}
