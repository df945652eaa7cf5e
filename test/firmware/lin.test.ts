// The firmware as users flash it (manifest.json), built with the real Moddable SDK for its simulator and
// run headless against the real local service: feeds arrive, presence stays alive, a command is traced,
// its one kept-open connection is replaced when the server closes it or the service restarts (nothing
// lost or stored twice, one trace line each time), an outage of the service loses nothing, and a device
// killed in the middle of an outage delivers what its flash queue held once it is back. Built with ages=1,
// as against the local service: every sample goes with its age. Runs where the SDK is installed (MODDABLE set, its tools built,
// xvfb-run present); elsewhere it is skipped with the reason. The lin build has the ESP32's memory
// budget (manifest.json), so every run is also a check that the firmware fits. mcsim runs from a config
// directory of this test's: another mcsim started meanwhile would otherwise copy its library over this one's.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSeed } from '../../src/service/seed';
import { startService } from '../../src/service';
import type { RunningService } from '../../src/service';
import type { Feed, Resource } from '../../src/core/wire/wire';
import * as client from '../support/client';
import { FaultProxy } from '../support/fault-proxy';
import { until } from './line-log';
import { Simulator, buildApp, findSdk } from './sdk';
import type { Sdk } from './sdk';

const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const sdk = findSdk(ROOT);
const SEED = parseSeed(readFileSync(join(ROOT, 'examples', 'device-seed.json'), 'utf8'));
const DEVICE = SEED.devices[0];
const [UPTIME, HEAP, , COMMAND] = DEVICE.resources.map((r) => r.id_resource);
/** Samples per burst to the flash queue once a flush failed: small, so that an outage of seconds writes. */
const SPILL_EVERY = 6;

if (typeof sdk === 'string') console.log('firmware tests skipped: ' + sdk);

describe.skipIf(typeof sdk === 'string')('the firmware on a real lin build (Moddable SDK)', () => {
  // Made in beforeAll: describe's body runs even where the suite is skipped, and afterAll does not.
  let dir = '';
  let backlogPath = '';
  let service: RunningService;
  // The firmware talks to the service through the fault proxy: it keeps every feed the service stored,
  // in order, and an outage is the proxy off the network: its open connections die, new ones are refused.
  let proxy: FaultProxy;
  let library = '';
  let device: Simulator | null = null;

  const stop = async (): Promise<void> => {
    await proxy.setDown(true);
    proxy.dropConnections();
  };
  const start = (): Promise<void> => proxy.setDown(false);
  /** The device's operations straight to the service, not through the proxy. */
  const api = () => client.device(service.url, DEVICE.public_key, DEVICE.token);
  /** Every uptime value the service stored, in the order it stored them. */
  const uptimes = async (): Promise<number[]> => proxy.stored.filter((f) => f.id_resource === UPTIME).map((f) => Number(f.raw_data));
  const contiguous = (values: number[]): number[] => Array.from({ length: values.length }, (_, i) => values[0] + i);
  /** The flash queue's files (`backlogPath.*`: segments and its state) and their bytes. */
  const flash = (): number[] => readdirSync(dir).filter((n) => n.startsWith('feed-agent.q.')).map((n) => statSync(join(dir, n)).size);
  /** The firmware's trace lines from line `from` on that match `pattern`. */
  const traced = (from: number, pattern: RegExp): string[] => device!.lines.slice(from).filter((l) => pattern.test(l));
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'feed-agent-firmware-'));
    mkdirSync(join(dir, 'config'));
    backlogPath = join(dir, 'feed-agent.q');
    service = await startService({ seed: SEED });
    proxy = await FaultProxy.start(service.url);
    library = buildApp(sdk as Sdk, ROOT, join(dir, 'build'), {
      url: proxy.url,
      publicKey: DEVICE.public_key,
      token: DEVICE.token,
      resources: 'uptime:' + UPTIME + ',heap:' + HEAP + ',command:' + COMMAND,
      every: 1000,
      commandEvery: 1000,
      statusEvery: 2000,
      spillEvery: SPILL_EVERY,
      backlogPath,
      ages: 1,
    }).library;
    device = new Simulator(sdk as Sdk, library, join(dir, 'config'));
  }, 600_000);

  afterAll(async () => {
    await device?.kill();
    await proxy?.close();
    await service?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts, feeds its resources and keeps them alive', async () => {
    await device!.waitFor(/^feed-agent: started$/, 30_000);
    await until('three uptime feeds stored', async () => (await uptimes()).length >= 3, 30_000, device);
    const records = (await api().getResources(UPTIME + ',' + HEAP + ',' + COMMAND, '?silent=true')).json.payload as Resource[];
    expect(records.map((r) => r.is_alive)).toEqual([true, true, true]);
    const heap = (await api().lastFeeds(String(HEAP), '?silent=true')).json.payload as (Feed | null)[];
    expect(Number(heap[0]?.raw_data)).toBeGreaterThan(0);
  }, 90_000);

  it('traces each command written to its command resource once', async () => {
    const from = device!.lines.length;
    const created = (await api().createFeed(COMMAND, 1)).json.payload as { id_resource_feed: number };
    const line = device!.lines[await device!.waitFor(/^feed-agent: command /, 10_000, from)];
    expect(line).toBe('feed-agent: command true for resource ' + COMMAND + ' (feed ' + created.id_resource_feed + ')');
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(device!.lines.slice(from).filter((l) => l.startsWith('feed-agent: command '))).toHaveLength(1);
  }, 30_000);

  it('replaces its connection when the server closes it while idle: nothing lost or stored twice, one line each time', async () => {
    const from = device!.lines.length;
    const before = (await uptimes()).length;
    // The firmware asks every second: most of the time its connection is idle, and the server closes it.
    for (let i = 0; i < 3; i++) {
      proxy.closeIdle();
      await sleep(2_500);
    }
    await until('uptime feeds after the closes', async () => (await uptimes()).length >= before + 8, 30_000, device);
    const values = await uptimes();
    expect(values).toEqual(contiguous(values));
    const closes = traced(from, /^info: link: connection \d+ to .* ended after \d+ answers? \(connection closed by the server\)/);
    expect(closes.length).toBeGreaterThanOrEqual(1);
    expect(closes.length).toBeLessThanOrEqual(3);
  }, 60_000);

  it('reconnects after the service restarted under it: nothing lost or stored twice, said once', async () => {
    const from = device!.lines.length;
    const before = (await uptimes()).length;
    await stop();
    await sleep(3_000);
    await start();
    await until('uptime feeds after the restart', async () => (await uptimes()).length >= before + 8, 60_000, device);
    const values = await uptimes();
    expect(values).toEqual(contiguous(values));
    // The connection that died says so once, unless a request was on it: then the request's failure says it.
    expect(traced(from, /^info: link: /).length, device!.lines.slice(from).join('\n')).toBeLessThanOrEqual(1);
    // Each failure while it was down is said once, then counted: no log line repeats the one before.
    const logged = traced(from, /^(debug|info|warn|error): /);
    expect(logged.filter((line, i) => i > 0 && line === logged[i - 1])).toEqual([]);
    await until('the flash queue of the restart deleted', async () => flash().length === 0, 30_000, device);
  }, 120_000);

  it('loses nothing while the service is down, and writes its queue to flash only then', async () => {
    expect(flash()).toEqual([]);
    await stop();
    await until('the queue written to flash', async () => flash().some((bytes) => bytes > 0), 30_000, device);
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    await start();
    const before = (await uptimes()).length;
    await until('the outage delivered', async () => (await uptimes()).length >= before + 10, 60_000, device);
    await until('the flash queue deleted once it held nothing unsent', async () => flash().length === 0, 30_000, device);
    const values = await uptimes();
    // One reading a second from a monotonic clock: any gap would be a lost reading, a repeat one stored twice.
    expect(values).toEqual(contiguous(values));
  }, 180_000);

  it('delivers what its flash queue held after it was killed in the middle of an outage', async () => {
    await stop();
    await until('a burst on flash', async () => flash().some((bytes) => bytes > 0), 30_000, device);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await device!.kill();
    const flashBytes = flash().reduce((sum, bytes) => sum + bytes, 0);
    await start();
    const stored = await uptimes();
    device = new Simulator(sdk as Sdk, library, join(dir, 'config'));
    await device.waitFor(/^feed-agent: started$/, 30_000);
    await until('the flash queue delivered', async () => flash().length === 0, 60_000, device);
    const values = await uptimes();
    // The readings of the first run: as stored before the outage, then those the flash queue held.
    const firstRun = values.slice(0, values.indexOf(0, stored.length) < 0 ? values.length : values.indexOf(0, stored.length));
    const lastBefore = stored[stored.length - 1];
    const recovered = firstRun.slice(stored.length);
    expect(flashBytes).toBeGreaterThan(0);
    expect(recovered.length).toBeGreaterThan(0);
    // Contiguous from where the service stopped: lost at most the readings after the last burst.
    expect(recovered).toEqual(Array.from({ length: recovered.length }, (_, i) => lastBefore + 1 + i));
    expect(device.trace.join('\n')).toMatch(/restored \d+ unacknowledged samples/);
  }, 180_000);
});
