// The gateway box (docs/gateway.md). Its parts, each alone with FEED_AGENT_BENCH_GATEWAY_PARTS (a comma list
// of memory, append, throughput, kills, compare; all by default), and shorter with
// FEED_AGENT_BENCH_GATEWAY_SHORT=1 (for development: the figures are not the documented ones):
// - memory: 1, 10, 100 and 1,000 devices in one Node process as `feed-agent gateway` builds them: a config
//   parsed by the gateway's parser (every setting its default: durable queues of 1,024 readings synced
//   every second, one HTTP pool of 16 connections, 50 requests a second for the whole gateway), one
//   GatewayDevice each, against `feed-agent serve --demo-devices N` in a child process. Each device is
//   offered one reading a second as the MQTT input offers it (`offer`, `heard`), spread over the second.
//   FEED_AGENT_BENCH_GATEWAY_RPS sets `service.requestsPerSecond`, FEED_AGENT_BENCH_GATEWAY_QUEUE the queue;
// - append: the durable queue's fsync policies (bench/durable-append.ts);
// - throughput, kills, compare: `feed-agent gateway` between a broker and the service (bench/gateway-mqtt.ts).
//
// Each size runs in a fresh process (this bench again, told the size by CHILD), so that it starts from the
// same empty process. Once it reached its steady state (the warm-up, 150 s: WARMUP_MS), each window
// ends with two full collections, then reads RSS and what V8 tells of its heap and array buffers; each
// figure is the median of the windows. A process has fixed costs (code, compiled functions, V8's young
// generation, buffers) that a few devices cannot be told apart from, so the cost of a device is the cost
// each added device brings: from 100 to 1,000 devices, beside the same from 10 to 100 as the baseline.
// Linear growth keeps the two equal.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { createHttp } from '../platforms/node/http';
import type { HttpRequest } from '../src/core/host';
import { parseGatewayConfig } from '../src/gateway/config';
import type { GatewayConfig } from '../src/gateway/config';
import { GatewayDevice } from '../src/gateway/device';
import { paceRequests } from '../src/gateway/pacing';
import { demoFleetDevice } from '../src/service';
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
const short = process.env.FEED_AGENT_BENCH_GATEWAY_SHORT === '1';
/**
 * The warm-up lets the process reach its steady state: at the default 50 requests a second, 1,000 devices
 * take 20 s to each have had a request (and so the backlog each keeps between its turns), and V8 grows its
 * young generation in steps as objects survive its collections: at 100 devices from 8 to 16 MB after
 * about 50 s, to its largest (the size 1,000 devices reach within 30 s) after about 130 s, and no further
 * over the next three minutes. Measured sooner, 100 devices look 20 MB lighter than they run.
 */
const WARMUP_MS = short ? 10_000 : 150_000;
const WINDOW_MS = short ? 2000 : 3000;
const RUNS = short ? 3 : 7;
/** The environment variable that makes this section measure one size, in a child process. */
const CHILD = 'FEED_AGENT_BENCH_GATEWAY_DEVICES';
const PARTS = ['memory', 'append', 'throughput', 'kills', 'compare'] as const;
const RPS = process.env.FEED_AGENT_BENCH_GATEWAY_RPS;
const KEYS = ['cpuPct', 'rssKb', 'heapTotalKb', 'heapUsedKb', 'arrayBuffersKb', 'samplesPerSecond', 'requestsPerSecond'] as const;

type Load = Record<(typeof KEYS)[number], number>;

/** The config `feed-agent gateway` would parse for the first `devices` of the demo fleet: one MQTT-fed resource each. */
function gatewayConfig(url: string, devices: number, dir: string): GatewayConfig {
  const env: Record<string, string> = {};
  const json = {
    service: RPS === undefined ? { url } : { url, requestsPerSecond: Number(RPS) },
    queue: { dir },
    // Parsed for the routes' sake; the bench offers the readings itself, as the MQTT input does.
    mqtt: { url: 'mqtt://127.0.0.1' },
    devices: Array.from({ length: devices }, (_, k) => {
      const d = demoFleetDevice(k);
      env['TOKEN_' + k] = d.token;
      // The device's air temperature (its second resource).
      return { publicKey: d.publicKey, tokenEnv: 'TOKEN_' + k, queue: BENCH_DEVICE_QUEUE, resources: [{ id: d.resources[1], mqtt: { topic: `field/${k}/temperature` } }] };
    }),
  };
  return parseGatewayConfig(json, env, dir);
}

/** What `devices` gateway devices cost this process. */
async function measure(devices: number): Promise<Load> {
  const service = await serve(['--demo-devices', String(devices)]);
  const queues = mkdtempSync(join(tmpdir(), 'feed-agent-gateway-bench-'));
  const config = gatewayConfig(service.url, devices, queues);
  // The gateway's request path (gateway.ts): one pool, one token bucket; the requests are counted below it.
  const http = createHttp({ connections: config.service.connections });
  let requests = 0;
  const paced = paceRequests((req: HttpRequest) => {
    requests++;
    return http(req);
  }, config.service.requestsPerSecond);
  const noCommands = (): never => {
    throw new Error('the bench configures no commands');
  };
  const gateway = config.devices.map((d) => new GatewayDevice(d, config, paced.request, () => {}, noCommands));
  const accepted = () => gateway.reduce((sum, d) => sum + d.stats().accepted, 0);
  let field: ReturnType<typeof setInterval> | undefined;
  let offered = 0;
  let refused = 0;
  try {
    await Promise.all(gateway.map((d) => d.start()));
    // The field: each device offered one reading a second, the devices in turn, spread evenly over the second.
    const fieldStart = performance.now();
    field = setInterval(() => {
      const due = Math.floor(((performance.now() - fieldStart) * devices) / 1000);
      for (; offered < due; offered++) {
        const device = gateway[offered % devices];
        device.heard();
        if (device.offer(device.config.resources[0].id, 21.5) !== 'stored') refused++;
      }
    }, 10);
    await sleep(WARMUP_MS);
    const windows: Load[] = [];
    for (let i = 0; i < RUNS; i++) {
      const start = { accepted: accepted(), requests };
      const cpu = process.cpuUsage();
      const t0 = performance.now();
      await sleep(WINDOW_MS);
      const seconds = (performance.now() - t0) / 1000;
      const used = process.cpuUsage(cpu);
      const samplesPerSecond = (accepted() - start.accepted) / seconds;
      const requestsPerSecond = (requests - start.requests) / seconds;
      windows.push({ cpuPct: ((used.user + used.system) / 1e6 / seconds) * 100, ...memoryAfterGc(), samplesPerSecond, requestsPerSecond });
    }
    // A reading refused would be a queue that filled: the device would not be keeping up with its field.
    if (refused > 0) throw new Error(`${refused} of ${offered} readings were not queued`);
    return Object.fromEntries(KEYS.map((key) => [key, median(windows.map((w) => w[key]))])) as Load;
  } finally {
    clearInterval(field);
    await Promise.all(gateway.map((d) => d.stop(0)));
    paced.close();
    await service.stop();
    rmSync(queues, { recursive: true, force: true });
  }
}

/** The process's memory once two full collections ran (the bench runs with --expose-gc), in KB. */
function memoryAfterGc(): Pick<Load, 'rssKb' | 'heapTotalKb' | 'heapUsedKb' | 'arrayBuffersKb'> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('the gateway bench runs with --expose-gc');
  // A second collection frees what the first one's finalizers released (array buffers' backing stores).
  gc();
  gc();
  const m = process.memoryUsage();
  return { rssKb: m.rss / 1024, heapTotalKb: m.heapTotal / 1024, heapUsedKb: m.heapUsed / 1024, arrayBuffersKb: m.arrayBuffers / 1024 };
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
  const added = (key: (typeof KEYS)[number], from: number, to: number) => (loads.get(to)![key] - loads.get(from)![key]) / (to - from);
  const figures = {
    'gateway.cpuPerDevicePct': round(added('cpuPct', 100, 1000), 4),
    'gateway.baselineCpuPerDevicePct': round(added('cpuPct', 10, 100), 4),
    'gateway.rssPerDeviceKb': round(added('rssKb', 100, 1000), 1),
    'gateway.baselineRssPerDeviceKb': round(added('rssKb', 10, 100), 1),
    // The parts of it that V8 counts: the queues' typed arrays, the heap's live objects, the heap's size.
    'gateway.arrayBuffersPerDeviceKb': round(added('arrayBuffersKb', 100, 1000), 1),
    'gateway.heapUsedPerDeviceKb': round(added('heapUsedKb', 100, 1000), 1),
    'gateway.heapTotalPerDeviceKb': round(added('heapTotalKb', 100, 1000), 1),
    'gateway.samplesPerSecond': round(loads.get(1000)!.samplesPerSecond, 1),
    'gateway.requestsPerSecond': round(loads.get(1000)!.requestsPerSecond, 1),
  };
  const mb = (kb: number) => (format(round(kb / 1024, 1)) + ' MB').padStart(11);
  const header = '  devices   CPU (% of a core)   RSS after gc   heap used   heap size  array buffers   samples/s   requests/s';
  const lines = [...loads].map(([devices, l]) =>
    '  ' + format(devices).padStart(7) + (format(round(l.cpuPct, 2)) + ' %').padStart(20) + mb(l.rssKb).padStart(15) + mb(l.heapUsedKb).padStart(12) +
    mb(l.heapTotalKb).padStart(12) + mb(l.arrayBuffersKb).padStart(15) + format(round(l.samplesPerSecond, 1)).padStart(12) + format(round(l.requestsPerSecond, 1)).padStart(13),
  );
  return {
    title:
      `Gateway: N devices as \`feed-agent gateway\` builds them (its defaults${RPS === undefined ? '' : ', ' + RPS + ' requests/s'}), one reading a second each, ` +
      `durable queues of ${BENCH_DEVICE_QUEUE} readings (baseline: the same from 10 to 100 devices)`,
    rows: [
      { label: 'CPU per added device, 100 to 1,000 devices (% of one core)', value: figures['gateway.cpuPerDevicePct'], baseline: figures['gateway.baselineCpuPerDevicePct'], unit: '%' },
      { label: 'RSS per added device, 100 to 1,000 devices', value: figures['gateway.rssPerDeviceKb'], baseline: figures['gateway.baselineRssPerDeviceKb'], unit: 'KB' },
      { label: '  of which array buffers (the queue)', value: figures['gateway.arrayBuffersPerDeviceKb'], unit: 'KB' },
      { label: '  of which the V8 heap (its size)', value: figures['gateway.heapTotalPerDeviceKb'], unit: 'KB' },
      { label: '  the heap\'s live objects', value: figures['gateway.heapUsedPerDeviceKb'], unit: 'KB' },
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
