// What the firmware costs on a real build, where the Moddable SDK is installed (MODDABLE set): the
// bytecode of the core and the adapter in a release build (what goes into flash), and, from debug builds
// of bench/firmware run in the simulator, both HTTP hosts in the same run (keep-alive, the default; the
// classic Request as the baseline) against the local service behind a TLS terminator with a private CA
// (tls-front.ts): the TLS handshakes an hour and the bytes on the wire per sample, TLS included, at the
// default flush and command-poll periods; the XS heaps after a garbage collection with 8 sensors, a
// 1,024-sample queue and (keep-alive) the TLS connection open, and the deepest stack. The heaps' peaks are
// not figures: a fixed heap is collected when it is full, so its peak is its size; a run that ends
// without "memory full" is what shows the firmware fits. On lin a slot is 32 bytes (16 on the ESP32):
// slot counts compare as they are. And what an answer of 1 MB costs the chunk heap beside ordinary ones
// (firmware-answers.ts: a build whose heap grows, so that its size is its high-water mark). And the
// peripherals' bytecode, and what one entry of each kind holds of the XS heaps with lin's stand-in pins
// (bench/peripherals.ts). Without the SDK the section says why and gives no figure.
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { UPLINK_DEFAULTS } from '../src/core/config';
import { SampleQueue } from '../src/core/queue/queue';
import { parseSeed } from '../src/service/seed';
import type { Seed } from '../src/service/seed';
import { startService } from '../src/service';
import type { RunningService } from '../src/service';
import { Simulator, buildApp, findSdk, xsbFiles } from '../test/firmware/sdk';
import type { Sdk } from '../test/firmware/sdk';
import { answerPeaks } from './firmware-answers';
import { entriesOnLin } from './peripherals';
import type { AnswerPeaks } from './firmware-answers';
import { round } from './measure';
import type { BenchRow, BenchSection } from './section';
import { TlsFront } from './tls-front';

const APP = resolve('bench/firmware');
const LIN_SLOT_BYTES = 32;
/** A measure line every this often; the window is from the first to the last of MEASURES lines. */
const MEASURE_EVERY_MS = 20_000;
const MEASURES = 4;
/** The typed arrays of bench/firmware's queue: 1,024 samples, the default string pool, no storage. */
const QUEUE_BYTES = new SampleQueue({ capacity: 1024, overflow: 'drop-oldest', stringBytes: UPLINK_DEFAULTS.stringBytes, withSeq: false, clock: { now: () => 0 } }).bytes;
const HOSTS = ['keep-alive', 'classic'] as const;

/** bench/firmware's line: the XS heaps in use after a garbage collection (bytes), and the agent's counts. */
export const MEASURE_LINE = /^measure: slotHeapUsed/;

export function readMeasure(line: string): { slot: number; chunk: number; sent: number; queued: number } {
  const [slot, chunk, sent, queued] = (/slotHeapUsed (\d+) chunkHeapUsed (\d+) sent (\d+) queued (\d+)/.exec(line) as RegExpExecArray).slice(1).map(Number);
  return { slot, chunk, sent, queued };
}

interface HostRun {
  handshakesPerHour: number;
  bytesPerSample: number;
  slotHeapUsed: number;
  chunkHeapUsed: number;
  stackPeak: number;
  sent: number;
}

export async function benchFirmware(): Promise<BenchSection> {
  const title = 'Firmware on a real Moddable build (lin simulator, the ESP32 budget of manifest.json), over TLS';
  const sdk = findSdk(resolve('.'));
  if (typeof sdk === 'string') return { title, rows: [], figures: {}, note: 'skipped: ' + sdk };
  // A fixed directory under node_modules/.cache: mcconfig compiles the SDK's C only once there.
  const out = resolve('node_modules/.cache/feed-agent-firmware');
  const bytecode = (modules: string): number =>
    ['feed-agent/src/core', 'feed-agent/platforms/moddable'].flatMap((prefix) => xsbFiles(modules, prefix))
      // The adapter's firmware/ is the app, not the adapter, and its peripherals/ are the description's.
      .filter((file) => !/\/(firmware|peripherals)\//.test(file.slice(modules.length)))
      .reduce((sum, file) => sum + statSync(file).size, 0);
  const release = buildApp(sdk, APP, out, {}, false).modules;
  const coreBytecodeBytes = bytecode(release);
  const peripheralsBytecodeBytes = xsbFiles(release, 'feed-agent/platforms/moddable/peripherals').reduce((sum, file) => sum + statSync(file).size, 0);
  const entries = await entriesOnLin(sdk, out);

  const seed = parseSeed(await readFile(join(APP, 'seed.json'), 'utf8'));
  const service = await startService({ seed });
  const runs: Record<string, HostRun> = {};
  try {
    for (const host of HOSTS) runs[host] = await runHost(sdk, out, seed, service, host);
  } finally {
    await service.close();
  }
  const deviceSeed = parseSeed(await readFile('examples/device-seed.json', 'utf8'));
  const peaks: Record<string, AnswerPeaks> = {};
  for (const host of HOSTS) peaks[host] = await answerPeaks(sdk, out, deviceSeed, host);
  const [kept, classic] = [runs['keep-alive'], runs.classic];
  const figures: Record<string, number> = { 'firmware.coreBytecodeBytes': coreBytecodeBytes, 'firmware.peripheralsBytecodeBytes': peripheralsBytecodeBytes };
  for (const entry of entries) {
    figures['firmware.entry.' + entry.name + '.slots'] = entry.slots;
    figures['firmware.entry.' + entry.name + '.chunkBytes'] = entry.chunkBytes;
  }
  for (const [prefix, run] of [['firmware.', kept], ['firmware.classic.', classic]] as const) {
    figures[prefix + 'handshakesPerHour'] = round(run.handshakesPerHour, 1);
    figures[prefix + 'bytesPerSample'] = round(run.bytesPerSample, 1);
    figures[prefix + 'slotHeapUsed'] = run.slotHeapUsed;
    figures[prefix + 'chunkHeapUsed'] = run.chunkHeapUsed;
    figures[prefix + 'stackPeak'] = run.stackPeak;
  }
  for (const [prefix, host] of [['firmware.', 'keep-alive'], ['firmware.classic.', 'classic']] as const) {
    figures[prefix + 'chunkHighWaterBefore1MB'] = peaks[host].before;
    figures[prefix + 'chunkHighWaterControl'] = peaks[host].control;
    figures[prefix + 'chunkHighWaterAfter1MB'] = peaks[host].after;
  }
  const peak = (label: string, pick: (p: AnswerPeaks) => number): BenchRow => ({ label, value: pick(peaks['keep-alive']), baseline: pick(peaks.classic), unit: 'B' });
  const row = (label: string, unit: string, pick: (run: HostRun) => number): BenchRow => ({ label, value: pick(kept), baseline: pick(classic), unit });
  return {
    title,
    note: 'value: the keep-alive host (default); baseline: the classic Request (http=classic), in the same run',
    rows: [
      { label: 'bytecode of the core and adapter, release build (flash)', value: coreBytecodeBytes, unit: 'B' },
      { label: 'bytecode of the description and the peripherals (platforms/moddable/peripherals), the same', value: peripheralsBytecodeBytes, unit: 'B' },
      ...entries.map((e) => ({ label: 'XS heap of one ' + e.name + ' entry (lin stand-in pins; a slot is 32 B here, 16 on the ESP32)', value: e.slots, unit: 'slots + ' + e.chunkBytes + ' B' })),
      row('TLS handshakes an hour (flush every 10 s, command poll every 5 s)', '', (r) => r.handshakesPerHour),
      row('bytes on the wire per sample, TLS included (8 samples a second)', 'B', (r) => r.bytesPerSample),
      row('XS slot heap after gc, 8 sensors, queue 1,024 (lin bytes, /32 = slots)', 'B', (r) => r.slotHeapUsed),
      row('XS chunk heap after gc (the queue\'s typed arrays ' + QUEUE_BYTES + ' B)', 'B', (r) => r.chunkHeapUsed),
      row('deepest stack (creation.stack is 384)', 'slots', (r) => r.stackPeak),
      row('samples delivered in the run', '', (r) => r.sent),
      peak('XS chunk heap high-water, growing heap: 40 s of ordinary answers', (p) => p.before),
      peak('the same after 20 s more of them (the control)', (p) => p.control),
      peak('the same after a 1 MB answer with Content-Length and a 1 MB chunked one, and 20 s', (p) => p.after),
    ],
    figures,
  };
}

/** One debug build with `host`, run in mcsim against the service behind a fresh TLS front. */
async function runHost(sdk: Sdk, out: string, seed: Seed, service: RunningService, host: (typeof HOSTS)[number]): Promise<HostRun> {
  const front = await TlsFront.start(service.url);
  let simulator: Simulator | null = null;
  try {
    // The bench app with the front's private root among its resources, as ca=… names it.
    const app = front.app(join(out, 'firmware-tls'), join(APP, 'manifest.json'));
    const device = seed.devices[0];
    const ids = device.resources.map((r) => r.id_resource);
    const debug = buildApp(sdk, app, out, {
      url: front.url,
      publicKey: device.public_key,
      token: device.token,
      resources: ids.slice(0, -1).join(','),
      command: ids[ids.length - 1],
      http: host,
      ca: 'test-ca.der',
      measureEvery: MEASURE_EVERY_MS,
    });
    simulator = new Simulator(sdk, debug.library);
    const seen: { sent: number; slot: number; chunk: number; bytes: number; connections: number; at: number }[] = [];
    for (let i = 0, line = -1; i < MEASURES; i++) {
      line = await simulator.waitFor(MEASURE_LINE, MEASURE_EVERY_MS + 60_000, line + 1);
      const { slot, chunk, sent } = readMeasure(simulator.lines[line]);
      seen.push({ sent, slot, chunk, bytes: front.counting.bytes, connections: front.counting.connections, at: Date.now() });
    }
    const [first, last] = [seen[0], seen[seen.length - 1]];
    const instruments = simulator.instruments();
    return {
      handshakesPerHour: ((last.connections - first.connections) / (last.at - first.at)) * 3_600_000,
      bytesPerSample: (last.bytes - first.bytes) / (last.sent - first.sent),
      slotHeapUsed: last.slot,
      chunkHeapUsed: last.chunk,
      stackPeak: Math.max(...instruments.map((i) => i['Stack used'])) / LIN_SLOT_BYTES,
      sent: last.sent,
    };
  } finally {
    await simulator?.kill();
    await front.close();
  }
}
