// The gateway box (docs/gateway.md). Its parts, each alone with FEED_AGENT_BENCH_GATEWAY_PARTS (a comma list
// of memory, append, saturation, kills, compare; all by default), and shorter with
// FEED_AGENT_BENCH_GATEWAY_SHORT=1 (for development: the figures are not the documented ones):
// - memory: 1, 10, 100, 1,000 and 10,000 devices in one Node process as `feed-agent gateway` builds them: a
//   config parsed by the gateway's parser (every setting its default: a queue in memory of GATEWAY_DEFAULTS
//   .queue readings in front of a durable queue synced every second, one HTTP pool of 16 connections, 50
//   requests a second for the whole gateway, raised past 1,000 devices to keep each device's share: see
//   requestsFor), one GatewayDevice each, against `feed-agent serve --demo-devices N` in a child process.
//   Each device is offered one reading a second as the MQTT input offers it (`offer`, `heard`), spread
//   over the second. Beside it, today's design: the same with the queue in memory of 1,024 readings that
//   the gateway had before the backlog (its overflow, on disk, was empty at these rates), at 1,000 and
//   10,000 devices. FEED_AGENT_BENCH_GATEWAY_RPS sets `service.requestsPerSecond`, FEED_AGENT_BENCH_GATEWAY_QUEUE
//   the queue of the new design's runs;
// - append: the durable queue's fsync policies (bench/durable-append.ts);
// - saturation, kills, compare: `feed-agent gateway` between a broker and the service (bench/gateway-mqtt.ts).
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

import { createHttp } from '../platforms/node/host/http';
import type { HttpRequest } from '../src/core/host/host';
import { GATEWAY_DEFAULTS, parseGatewayConfig } from '../platforms/node/gateway/config';
import type { GatewayConfig } from '../platforms/node/gateway/config';
import { GatewayDevice } from '../platforms/node/gateway/device';
import { paceRequests } from '../platforms/node/gateway/pacing';
import { WindowMemory } from '../platforms/node/gateway/window-memory';
import { demoFleetDevice } from '../src/service';
import { measureAppends } from './durable-append';
import { playRole, ROLE_ENV } from './gateway-rig';
import { BENCH_DEVICE_QUEUE, comparison, kills, saturation, SATURATION_MAX_AGE_MS, THROUGHPUT_RATE, TODAY_QUEUE } from './gateway-mqtt';
import type { Outcome } from './gateway-mqtt';
import { format, median, round, sleep } from './measure';
import { runSection } from './section';
import type { BenchRow, BenchSection } from './section';
import { cli, serve } from './serve';
import { ROOT, workDir } from '../test/support/build';

const SIZES = [1, 10, 100, 1000, 10_000];
/** Today's design (a queue of TODAY_QUEUE in memory) is measured where its figures are compared. */
const TODAY_SIZES = [100, 1000, 10_000];
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
/** The environment variables that make this section measure one size (and queue), in a child process. */
const CHILD = 'FEED_AGENT_BENCH_GATEWAY_DEVICES';
const CHILD_QUEUE = 'FEED_AGENT_BENCH_GATEWAY_CHILD_QUEUE';
/** Set in a child that measures today's design: queues of their whole capacity, in memory of their own. */
const CHILD_TODAY = 'FEED_AGENT_BENCH_GATEWAY_CHILD_TODAY';
const PARTS = ['memory', 'append', 'saturation', 'kills', 'compare'] as const;
const RPS = process.env.FEED_AGENT_BENCH_GATEWAY_RPS;
const KEYS = ['cpuPct', 'rssKb', 'heapTotalKb', 'heapUsedKb', 'arrayBuffersKb', 'samplesPerSecond', 'requestsPerSecond', 'queued'] as const;

type Load = Record<(typeof KEYS)[number], number>;

/**
 * `service.requestsPerSecond` for `devices` devices: the gateway's default up to 1,000 devices, then as
 * many as keep each device's share of it at 1,000 devices (a request every 20 s, about 20 readings in
 * each). At the default, 10,000 devices would each send every 200 s: 200 readings a request, and 200 s to
 * start (each device's start-up lookup is paced too).
 */
function requestsFor(devices: number): number | undefined {
  if (RPS !== undefined) return Number(RPS);
  return devices <= 1000 ? undefined : (GATEWAY_DEFAULTS.requestsPerSecond * devices) / 1000;
}

/** The config `feed-agent gateway` would parse for the first `devices` of the demo fleet: one MQTT-fed resource each. */
function gatewayConfig(url: string, devices: number, queue: number | undefined, dir: string): GatewayConfig {
  const env: Record<string, string> = {};
  const requestsPerSecond = requestsFor(devices);
  const json = {
    service: requestsPerSecond === undefined ? { url } : { url, requestsPerSecond },
    queue: { dir },
    // Parsed for the routes' sake; the bench offers the readings itself, as the MQTT input does.
    mqtt: { url: 'mqtt://127.0.0.1' },
    devices: Array.from({ length: devices }, (_, k) => {
      const d = demoFleetDevice(k);
      env['TOKEN_' + k] = d.token;
      // The device's air temperature (its second resource).
      return { publicKey: d.publicKey, tokenEnv: 'TOKEN_' + k, ...(queue === undefined ? {} : { queue }), resources: [{ id: d.resources[1], mqtt: { topic: `field/${k}/temperature` } }] };
    }),
  };
  return parseGatewayConfig(json, env, dir);
}

/** What `devices` gateway devices (with queues in memory of `queue`, or the default) cost this process. */
async function measure(devices: number, queue: number | undefined, today: boolean): Promise<Load> {
  const service = await serve(['--demo-devices', String(devices)]);
  const queues = mkdtempSync(join(tmpdir(), 'feed-agent-gateway-bench-'));
  const config = gatewayConfig(service.url, devices, queue, queues);
  // The gateway's request path (gateway.ts): one pool, one token bucket; the requests are counted below it.
  const http = createHttp({ connections: config.service.connections });
  let requests = 0;
  const paced = paceRequests(config.service.requestsPerSecond);
  const counted = (req: HttpRequest) => {
    requests++;
    return http(req);
  };
  const noCommands = (): never => {
    throw new Error('the bench configures no commands');
  };
  // Today's design, a queue of its whole capacity in memory each, lends nothing.
  const windows = today ? undefined : new WindowMemory();
  const gateway = config.devices.map((d) => new GatewayDevice(d, config, { request: counted, turn: paced.turn, windows }, () => {}, noCommands));
  const accepted = () => gateway.reduce((sum, d) => sum + d.stats().accepted, 0);
  const queued = () => gateway.reduce((sum, d) => sum + d.stats().queued, 0);
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
      windows.push({ cpuPct: ((used.user + used.system) / 1e6 / seconds) * 100, ...memoryAfterGc(), samplesPerSecond, requestsPerSecond, queued: queued() });
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
function inChild(devices: number, queue: number | undefined, today = false): Load {
  const { figures } = runSection('gateway', { [CHILD]: String(devices), ...(queue === undefined ? {} : { [CHILD_QUEUE]: String(queue) }), ...(today ? { [CHILD_TODAY]: '1' } : {}) });
  return Object.fromEntries(KEYS.map((key) => [key, figures['gateway.child.' + key]])) as Load;
}

export async function benchGateway(): Promise<BenchSection> {
  const role = process.env[ROLE_ENV];
  if (role !== undefined) return playRole(role);
  const own = process.env[CHILD];
  if (own !== undefined) {
    const queue = process.env[CHILD_QUEUE];
    const load = await measure(Number(own), queue === undefined ? undefined : Number(queue), process.env[CHILD_TODAY] === '1');
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
  // The designs in turn, size by size, so that the machine's other work weighs on both alike.
  const loads = new Map<number, Load>();
  const today = new Map<number, Load>();
  for (const devices of SIZES) {
    loads.set(devices, inChild(devices, BENCH_DEVICE_QUEUE));
    if (TODAY_SIZES.includes(devices)) today.set(devices, inChild(devices, TODAY_QUEUE, true));
  }
  // What each added device costs between two sizes, as `gateway.<prefix><Key>PerDevice<unit><suffix>`
  // (rssKb → rssPerDeviceKb): CPU, RSS, and the parts of it that V8 counts (the queues' typed arrays, the
  // heap's live objects, the heap's size).
  const perDevice = (of: Map<number, Load>, prefix: string, suffix: string, from: number, to: number, keys: readonly (typeof KEYS)[number][]) =>
    Object.fromEntries(
      keys.map((key) => {
        const name = (prefix === '' ? key : prefix + key[0].toUpperCase() + key.slice(1)).replace(/(Kb|Pct)$/, 'PerDevice$1');
        return ['gateway.' + name + suffix, round((of.get(to)![key] - of.get(from)![key]) / (to - from), key === 'cpuPct' ? 4 : 1)];
      }),
    );
  const costs = ['cpuPct', 'rssKb', 'arrayBuffersKb', 'heapUsedKb', 'heapTotalKb'] as const;
  const figures: Record<string, number> = {
    ...perDevice(loads, '', '', 100, 1000, costs),
    // 10,000 devices: what each device beyond 1,000 adds.
    ...perDevice(loads, '', '10k', 1000, 10_000, costs),
    ...perDevice(loads, 'baseline', '', 10, 100, ['cpuPct', 'rssKb']),
    ...perDevice(today, 'today', '', 100, 1000, ['rssKb']),
    ...perDevice(today, 'today', '10k', 1000, 10_000, ['rssKb']),
    'gateway.rssMb10k': round(loads.get(10_000)!.rssKb / 1024, 1),
    'gateway.todayRssMb10k': round(today.get(10_000)!.rssKb / 1024, 1),
    'gateway.samplesPerSecond': round(loads.get(1000)!.samplesPerSecond, 1),
    'gateway.requestsPerSecond': round(loads.get(1000)!.requestsPerSecond, 1),
    'gateway.samplesPerSecond10k': round(loads.get(10_000)!.samplesPerSecond, 1),
    // Readings waiting at 10,000 devices: about 20 s of them, if the devices keep up.
    'gateway.queued10k': round(loads.get(10_000)!.queued),
  };
  const mb = (kb: number) => (format(round(kb / 1024, 1)) + ' MB').padStart(11);
  const header = '  queue   devices   CPU (% of a core)   RSS after gc   heap used   heap size  array buffers   samples/s   requests/s   queued';
  const line = (queue: string, devices: number, l: Load) =>
    '  ' + queue.padStart(5) + format(devices).padStart(10) + (format(round(l.cpuPct, 2)) + ' %').padStart(20) + mb(l.rssKb).padStart(15) + mb(l.heapUsedKb).padStart(12) +
    mb(l.heapTotalKb).padStart(12) + mb(l.arrayBuffersKb).padStart(15) + format(round(l.samplesPerSecond, 1)).padStart(12) + format(round(l.requestsPerSecond, 1)).padStart(13) +
    format(round(l.queued)).padStart(9);
  const window = String(BENCH_DEVICE_QUEUE ?? GATEWAY_DEFAULTS.queue);
  return {
    title:
      `Gateway: N devices as \`feed-agent gateway\` builds them (its defaults${RPS === undefined ? '; 500 requests/s at 10,000 devices' : ', ' + RPS + ' requests/s'}), one reading a second each, ` +
      `queues in memory of ${window} readings in front of the backlog on disk (baseline: today's design, queues of ${TODAY_QUEUE})`,
    rows: [
      { label: 'CPU per added device, 100 to 1,000 devices (% of one core)', value: figures['gateway.cpuPerDevicePct'], baseline: figures['gateway.baselineCpuPerDevicePct'], unit: '% (baseline: 10 to 100)' },
      { label: 'RSS per added device, 100 to 1,000 devices', value: figures['gateway.rssPerDeviceKb'], baseline: figures['gateway.todayRssPerDeviceKb'], unit: 'KB' },
      { label: '  the same, 10 to 100 devices (V8 grows its young generation between them)', value: figures['gateway.baselineRssPerDeviceKb'], unit: 'KB' },
      { label: '  of which array buffers (the queue)', value: figures['gateway.arrayBuffersPerDeviceKb'], unit: 'KB' },
      { label: '  of which the V8 heap (its size)', value: figures['gateway.heapTotalPerDeviceKb'], unit: 'KB' },
      { label: '  the heap\'s live objects', value: figures['gateway.heapUsedPerDeviceKb'], unit: 'KB' },
      { label: 'RSS per added device, 1,000 to 10,000 devices', value: figures['gateway.rssPerDeviceKb10k'], baseline: figures['gateway.todayRssPerDeviceKb10k'], unit: 'KB' },
      { label: 'RSS at 10,000 devices', value: figures['gateway.rssMb10k'], baseline: figures['gateway.todayRssMb10k'], unit: 'MB' },
    ],
    table: [header, ...[...loads].map(([devices, l]) => line(window, devices, l)), ...[...today].map(([devices, l]) => line(String(TODAY_QUEUE), devices, l))],
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
      for (const part of ['saturation', 'kills']) parts.delete(part);
    }
    const describe = (name: string, o: Outcome) =>
      `  ${name}: ${format(o.published)} acknowledged by ${o.broker}, lost ${o.lost}, duplicates ${o.duplicates}, ` +
      `stored unacknowledged ${o.unacknowledgedStored}, publisher reconnections ${o.publisherReconnects}, oldest ${format(round(o.maxAgeMs / 1000, 1))} s, published ${format(round(o.publishedPerSecond))}/s, ${format(round(o.throughput))} msg/s`;
    if (parts.has('saturation')) {
      const s = await saturation(run, short);
      // The figures of before, from the run offered 24,000 a second (the gateway as it is).
      const at24k = s.steps.find((step) => step.rate === THROUGHPUT_RATE && step.queue === s.steps[0].queue);
      Object.assign(figures, {
        'gateway.mqttSaturationPerSecond': round(s.limit),
        'gateway.todayMqttSaturationPerSecond': round(s.todayLimit),
        'gateway.mqttSaturationCapped': s.capped ? 1 : 0,
        'gateway.mqttLost': s.steps.reduce((n, step) => n + step.outcome.lost, 0),
        'gateway.mqttDuplicates': s.steps.reduce((n, step) => n + step.outcome.duplicates, 0),
        // Duplicates the publisher made: each reconnection publishes again what had no PUBACK yet.
        'gateway.mqttPublisherReconnects': s.steps.reduce((n, step) => n + step.outcome.publisherReconnects, 0),
        'gateway.mosquitto': s.steps[0].outcome.broker === 'mosquitto' ? 1 : 0,
      });
      if (at24k !== undefined) {
        Object.assign(figures, {
          'gateway.mqttMessagesPerSecond': round(at24k.outcome.throughput),
          'gateway.mqttPublishedPerSecond': round(at24k.outcome.publishedPerSecond),
          'gateway.mqttMaxAgeMs': round(at24k.outcome.maxAgeMs),
        });
      }
      rows.push({
        label: `MQTT: highest offered msg/s with the oldest reading under ${SATURATION_MAX_AGE_MS / 1000} s${s.capped ? ' (the publisher offered no more: at least)' : ''}`,
        value: figures['gateway.mqttSaturationPerSecond'],
        baseline: figures['gateway.todayMqttSaturationPerSecond'],
        unit: 'msg/s',
      });
      rows.push({ label: 'MQTT: lost over every rate tried', value: figures['gateway.mqttLost'], unit: 'messages' });
      for (const step of s.steps) table.push(describe(`offered ${format(step.rate)}/s, queue ${step.queue}${step.held ? '' : ' (not held)'}`, step.outcome));
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
