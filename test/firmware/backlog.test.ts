// The firmware's backlog on a real lin build (Moddable SDK), in the ESP32's budget (manifest.json's lin
// creation: fixed heaps), run headless against the real local service behind a platform proxy
// (platform-proxy.ts) in front of the fault proxy, which keeps what the service stored. An outage of
// 5 minutes, every connection reset, at every=50: 6,000 readings, six times the 1,024 the queue holds in
// RAM. Everything arrives once the platform is back, within the default backoff, once and in order, and
// the XS heaps after a collection are what they were before it. Then a power cut (mcsim killed) in an
// outage: the flash held everything accepted, and all of it arrives after the restart, once. Runs where
// the SDK is installed; elsewhere it is skipped with the reason (sdk.ts). mcsim runs from a config
// directory of this test's: another mcsim started meanwhile would otherwise copy its library over this
// one's while it runs (a segmentation fault, seen once).
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openFlashQueue } from '../../platforms/moddable/storage/flash-queue';
import { parseSeed } from '../../src/service/seed';
import { startService } from '../../src/service';
import type { RunningService } from '../../src/service';
import { Disk } from '../support/disk';
import { FaultProxy } from '../support/fault-proxy';
import { fileSystemStandIn } from '../moddable/standins/file';
import { PlatformProxy } from './platform-proxy';
import { until } from './line-log';
import { Simulator, buildApp, findSdk } from './sdk';
import type { Sdk } from './sdk';
import { lastStatus } from './status-line';
import type { Status } from './status-line';

const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const sdk = findSdk(ROOT);
const SEED = parseSeed(readFileSync(join(ROOT, 'examples', 'device-seed.json'), 'utf8'));
const DEVICE = SEED.devices[0];
const [UPTIME, , , COMMAND] = DEVICE.resources.map((r) => r.id_resource);
const EVERY = 50;
const OUTAGE_MS = 300_000;
const WINDOW = 1024;
/** After an outage: the default backoff's cap (120 s), and time to send what it left. */
const DELIVERY_MS = 240_000;
const HEAPS = /^heaps: slot (\d+) chunk (\d+)$/;
/** How far one collection's heaps differ from another's in the same state, in bytes (the first test). */
const HEAPS_SPREAD = 12 * 1024;

if (typeof sdk === 'string') console.log('firmware backlog tests skipped: ' + sdk);

describe.skipIf(typeof sdk === 'string')('the firmware\'s backlog on a real lin build (Moddable SDK)', () => {
  let dir = '';
  let service: RunningService;
  let fault: FaultProxy;
  let platform: PlatformProxy;
  let library = '';
  let device: Simulator | null = null;

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** The last status line from line `from` on, read. */
  const status = (from = 0): Status | null => lastStatus(device!.lines, from);
  /**
   * The most the heaps lines from line `from` on say, in bytes (a slot is 32 bytes on lin): a collection
   * finds a request's objects or not, as it comes, so one line is not the heaps' figure.
   */
  const heaps = (from: number): { slot: number; chunk: number; lines: number } => {
    const all = device!.lines.slice(from).filter((l) => HEAPS.test(l)).map((l) => (HEAPS.exec(l) as RegExpExecArray).slice(1).map(Number));
    return { slot: Math.max(...all.map((h) => h[0])), chunk: Math.max(...all.map((h) => h[1])), lines: all.length };
  };
  const heapsAfter = async (n: number): Promise<{ slot: number; chunk: number; lines: number }> => {
    const from = device!.lines.length;
    await until(n + ' heaps lines', () => device!.lines.slice(from).filter((l) => HEAPS.test(l)).length >= n, n * 10_000 + 30_000, device);
    return heaps(from);
  };
  const uptimes = (): number[] => fault.stored.filter((f) => f.id_resource === UPTIME).map((f) => Number(f.raw_data));
  const flash = (): string[] => readdirSync(dir).filter((n) => n.startsWith('feed-agent.q.'));
  /**
   * Stops the platform for a few seconds, so that nothing moves: then the last status line's `sent` is
   * every sample the device had delivered, to compare with what the service stored.
   */
  const frozen = async (): Promise<Status> => {
    platform.play = { do: 'reset' };
    await sleep(3_000);
    const lines = device!.lines.length;
    await until('a status line while frozen', () => status(lines) !== null, 10_000, device);
    platform.play = { do: 'pass' };
    return status(lines) as Status;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'feed-agent-backlog-'));
    mkdirSync(join(dir, 'config'));
    service = await startService({ seed: SEED });
    fault = await FaultProxy.start(service.url);
    platform = await PlatformProxy.start(fault.url);
    library = buildApp(sdk as Sdk, join(ROOT, 'test', 'firmware', 'heaps-app'), join(dir, 'build'), {
      url: platform.url,
      publicKey: DEVICE.public_key,
      token: DEVICE.token,
      resources: 'uptime:' + UPTIME + ',command:' + COMMAND,
      every: EVERY,
      statusEvery: 2000,
      heapsEvery: 10_000,
      backlogPath: join(dir, 'feed-agent.q'),
      ages: 1,
    }).library;
    device = new Simulator(sdk as Sdk, library, join(dir, 'config'));
  }, 600_000);

  afterAll(async () => {
    await device?.kill();
    await platform?.close();
    await fault?.close();
    await service?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps a 5-minute outage at every=50 on flash, and delivers all of it once the platform is back, with its heaps unchanged', async () => {
    await device!.waitFor(/^feed-agent: started$/, 60_000);
    const before = await heapsAfter(6);
    const start = Date.now();
    const from = device!.lines.length;
    platform.play = { do: 'reset' };
    await until('6,000 readings queued, six times the queue in RAM', () => Date.now() - start >= OUTAGE_MS && (status(from)?.queued ?? 0) >= 6 * 1000, OUTAGE_MS + 600_000, device);
    const during = heaps(from);
    const outage = status(from) as Status;
    expect(outage.dropped).toBe(0);
    expect(flash().length).toBeGreaterThan(1);
    platform.play = { do: 'pass' };
    // At every=50 the queue in RAM is never empty at a status line (a batch of 50 leaves as 50 more come):
    // delivered is everything the outage queued stored, and the flash queue's files deleted.
    await until('the outage delivered', () => uptimes().length >= outage.sent + outage.queued && flash().length === 0, DELIVERY_MS, device);
    const after = await heapsAfter(6);
    const end = await frozen();
    const values = uptimes();
    console.log('backlog test: ' + outage.queued + ' readings queued in the outage (' + (outage.queued - WINDOW) + ' on flash only); XS heaps after a collection, slot/chunk bytes: before ' +
      before.slot + '/' + before.chunk + ', in the outage ' + during.slot + '/' + during.chunk + ', after ' + after.slot + '/' + after.chunk);
    // Everything the device sent was stored once, in order, and it dropped none.
    expect(values.length).toBe(end.sent);
    expect(end.dropped).toBe(0);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    // A reading every 50 ms: every second of uptime is there, none twice over (at most 20 a second, 21 at the edges).
    const perSecond = new Map<number, number>();
    for (const v of values) perSecond.set(v, (perSecond.get(v) ?? 0) + 1);
    expect([...perSecond.keys()]).toEqual(Array.from({ length: values[values.length - 1] - values[0] + 1 }, (_, i) => values[0] + i));
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(21);
    // The backlog lives on flash: the heaps hold what they held before the outage, within what one
    // request's objects make them differ from one collection to the next (a minute's lines after the
    // outage once spanned 39,200 to 49,440 B of slots, 63,808 to 70,416 B of chunks). The 5,000 readings
    // on flash only would take 80 KB at the least, more than the fixed heaps have.
    expect(during.slot).toBeLessThanOrEqual(before.slot + HEAPS_SPREAD);
    expect(during.chunk).toBeLessThanOrEqual(before.chunk + HEAPS_SPREAD);
    expect(after.slot).toBeLessThanOrEqual(before.slot + HEAPS_SPREAD);
    expect(after.chunk).toBeLessThanOrEqual(before.chunk + HEAPS_SPREAD);
    expect(device!.alive).toBe(true);
  }, OUTAGE_MS + 1_200_000);

  it('loses nothing to a power cut in an outage: what the flash held arrives after the restart, once, and it held everything queued', async () => {
    const storedBefore = uptimes().length;
    const from = device!.lines.length;
    platform.play = { do: 'reset' };
    await until('the queue in RAM full and 1,000 more on flash', () => (status(from)?.queued ?? 0) >= WINDOW + 1000, 180_000, device);
    const last = status(from) as Status;
    await device!.kill();
    // What the flash holds after the power cut, read by the flash queue itself from a copy.
    const copy = new Disk();
    let held = 0;
    try {
      for (const name of flash()) copyFileSync(join(dir, name), join(copy.root, name));
      openFlashQueue(fileSystemStandIn((op) => copy.run(op)), { path: '/feed-agent.q' }).load(() => void held++);
    } finally {
      copy.remove();
    }
    // Nothing was sent in the outage: what was queued at the last status line is all on flash, and more.
    expect(held).toBeGreaterThanOrEqual(last.queued);
    expect(held).toBeLessThanOrEqual(last.queued + 3 * 20);
    platform.play = { do: 'pass' };
    device = new Simulator(sdk as Sdk, library, join(dir, 'config'));
    await device.waitFor(new RegExp('restored ' + held + ' unacknowledged samples'), 60_000);
    await until('what the flash held delivered', () => uptimes().length >= storedBefore + held + 20, DELIVERY_MS, device);
    const end = await frozen();
    const values = uptimes().slice(storedBefore);
    // The first run's readings come first (its uptime is the larger), then the second run's from 0.
    const firstRun = values.slice(0, values.findIndex((v, i) => i > 0 && v < values[i - 1]));
    expect(firstRun.length).toBe(held);
    // Once: everything the device delivered, before and after the power cut, was stored once.
    expect(uptimes().length).toBe(last.sent + end.sent);
    expect(device.trace.join('\n')).toMatch(/a batch of \d+ samples was out in a request when the last run ended: it is read back before it is sent again/);
  }, 600_000);
});
