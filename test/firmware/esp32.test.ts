// The firmware as users flash it (manifest.json) built for the ESP32 with ESP-IDF through the README's
// line, with FEED_AGENT_NET=openeth, and booted in QEMU's esp32 machine with the manifest's memory budget
// and partitions: it brings the emulated Ethernet up, delivers to `feed-agent serve` on 127.0.0.1 (through
// the fault proxy, over QEMU's user network restricted to this machine), takes a command, keeps its
// resources alive, loses nothing and stores nothing twice through an outage and a reset in the middle of
// one (its flash queue, littlefs on the emulated flash, restored), delivers over TLS to a terminator with
// a private CA, and seeds its waits from esp_random. Runs where the ESP32 tools are (IDF_PATH set, or
// ESP_ROOT naming a folder with their env.sh; QEMU with the esp32 machine for the emulator part);
// elsewhere it is skipped with the reason.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseSeed } from '../../src/service/seed';
import type { Feed, Resource } from '../../src/core/wire/wire';
import { TlsFront } from '../../bench/tls-front';
import * as client from '../support/client';
import { FaultProxy } from '../support/fault-proxy';
import { killAll } from '../support/children';
import { Served } from '../support/serve';
import { ESP32_SRAM_BYTES, buildEsp32, esp32Creation, esp32ImageCost, findEsp32 } from './esp32';
import type { Esp32Image, Esp32Tools } from './esp32';
import { until } from './line-log';
import { GUEST_SERVICE, QemuRun, boot, findQemu, readPartition, writeFlash } from './qemu';
import { lastStatus } from './status-line';
import type { Status } from './status-line';

const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const tools = findEsp32(ROOT);
const qemu = typeof tools === 'string' ? { skip: tools } : findQemu(tools);
const SEED_FILE = join(ROOT, 'examples', 'device-seed.json');
const DEVICE = parseSeed(readFileSync(SEED_FILE, 'utf8')).devices[0];
const [UPTIME, HEAP, , COMMAND] = DEVICE.resources.map((r) => r.id_resource);
/** Where the firmware finds the service: QEMU forwards it to the fault proxy. */
const SERVICE = GUEST_SERVICE;
/**
 * Samples per burst to the flash queue once a flush failed: 10 s of readings. Each flash operation stops
 * the other core for a moment (ESP-IDF's flash driver), which QEMU makes long on a loaded machine: fewer
 * bursts, fewer seconds in which the emulated board stalls.
 */
const SPILL_EVERY = 20;
/** The firmware's first line once it runs: setup/network has the Ethernet's address. */
const UP = /^open_eth: IP address /;
const CONFIG = {
  url: 'http://' + SERVICE.address,
  publicKey: DEVICE.public_key,
  token: DEVICE.token,
  resources: 'uptime:' + UPTIME + ',heap:' + HEAP + ',command:' + COMMAND,
  every: 1000,
  commandEvery: 1000,
  statusEvery: 2000,
  spillEvery: SPILL_EVERY,
};

if (typeof tools === 'string') console.log('ESP32 tests skipped: ' + tools);
else if (typeof qemu !== 'string') console.log('ESP32 emulator tests skipped: ' + qemu.skip);
// No emulator outlives the file, whatever failed.
afterAll(killAll);

/** A fixed folder: ESP-IDF's components compile only once there, for each app. */
const OUT = join(ROOT, 'node_modules', '.cache', 'feed-agent-esp32-test');
let built: Esp32Image | undefined;
/**
 * The image the tests run, built once: -i, a release build with instrumentation, whose trace goes to the
 * UART (a debug build's goes to xsbug).
 */
function image(): Esp32Image {
  built ??= buildEsp32(tools as Esp32Tools, ROOT, ROOT, OUT, ['-i'], CONFIG, 'openeth');
  return built;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(typeof tools === 'string')('the firmware built for the ESP32 (ESP-IDF, FEED_AGENT_NET=openeth)', () => {
  beforeAll(() => void image(), 3_600_000);

  it('fits the chip: the app within its partition, static RAM with the manifest\'s XS heap within 520 KB', () => {
    const cost = esp32ImageCost(tools as Esp32Tools, image());
    expect(cost.flashBytes).toBeLessThan(cost.partitionBytes);
    expect(cost.dramBytes).toBeGreaterThan(0);
    expect(cost.ramBytes + esp32Creation(ROOT).static).toBeLessThan(ESP32_SRAM_BYTES);
  });

  describe.skipIf(typeof qemu !== 'string')('in QEMU\'s esp32 machine', () => {
    let dir = '';
    let flash = '';
    let served: Served;
    let proxy: FaultProxy;
    let device: QemuRun | null = null;

    /** Powers the board on, until its Ethernet has an address. */
    const power = (): Promise<QemuRun> => boot(tools as Esp32Tools, flash, { forwards: [{ ...SERVICE, hostPort: Number(new URL(proxy.url).port) }] }, UP);
    const api = () => client.device(served.url, DEVICE.public_key, DEVICE.token);
    const uptimes = (): number[] => proxy.stored.filter((f) => f.id_resource === UPTIME).map((f) => Number(f.raw_data));
    const ascending = (values: number[]): boolean => values.every((v, i) => i === 0 || v >= values[i - 1]);
    /**
     * Waits until the device's own count of what it sent this boot equals what the service stored of it
     * (the feeds from `from` on), and checks that its counts account for every sample it accepted:
     * nothing stored twice, nothing lost between the queue and the service, nothing dropped. `restored`:
     * samples of an earlier boot it took from flash, which it sends but did not accept.
     */
    const accounted = async (from: number, restored = 0): Promise<Status> => {
      await waitUntil('the device\'s sent count equal to what the service stored', () => lastStatus(device!.lines)?.sent === proxy.stored.length - from, 120_000);
      const status = lastStatus(device!.lines) as Status;
      expect(status.accepted + restored).toBe(status.sent + status.queued + status.dropped + status.setAside);
      expect([status.dropped, status.setAside]).toEqual([0, 0]);
      return status;
    };
    /** The uptime seconds missing from `values`: seconds in which the emulated board took no reading, stalled. */
    const skipped = (values: number[]): number => values.reduce((n, v, i) => n + (i > 0 && v > values[i - 1] + 1 ? v - values[i - 1] - 1 : 0), 0);
    /**
     * The uptime values equal to the one before: a reading taken late enough to round into the next
     * second, then the next one on time. Two readings, each counted once by the device (accounted), not
     * one stored twice.
     */
    const repeated = (values: number[]): number => values.filter((v, i) => i > 0 && v === values[i - 1]).length;
    const storage = (): Buffer => readPartition(flash, 'storage');
    const waitUntil = (what: string, done: () => boolean, ms: number): Promise<void> => until(what, done, ms, device);
    const stop = async (): Promise<void> => {
      await proxy.setDown(true);
      proxy.dropConnections();
    };
    const start = (): Promise<void> => proxy.setDown(false);

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'feed-agent-esp32-'));
      flash = join(dir, 'flash.bin');
      writeFlash(image(), flash);
      served = await Served.start(join(inject('built'), 'cli.js'), ['--port', '0', '--seed', SEED_FILE]);
      proxy = await FaultProxy.start(served.url);
      device = await power();
    }, 480_000);

    afterAll(async () => {
      await device?.stop();
      await proxy?.close();
      served?.child.kill('SIGTERM');
      await served?.exited;
      rmSync(dir, { recursive: true, force: true });
    });

    it('brings up its Ethernet in the manifest\'s memory, starts, feeds its resources and keeps them alive', async () => {
      const ip = await device!.waitFor(/^open_eth: IP address /, 120_000);
      expect(device!.lines[ip]).toBe('open_eth: IP address 10.0.2.15');
      const first = await device!.waitFor(/^feed-agent: device /, 60_000);
      expect(device!.lines[first]).toBe('feed-agent: device ' + DEVICE.public_key + ' at ' + CONFIG.url + ': 2 sensors every 1000 ms, 1 command resource');
      await device!.waitFor(/^feed-agent: started$/, 60_000);
      await waitUntil('three uptime feeds stored', () => uptimes().length >= 3, 60_000);
      const records = (await api().getResources(UPTIME + ',' + HEAP + ',' + COMMAND, '?silent=true')).json.payload as Resource[];
      expect(records.map((r) => r.is_alive)).toEqual([true, true, true]);
      const heap = (await api().lastFeeds(String(HEAP), '?silent=true')).json.payload as (Feed | null)[];
      expect(Number(heap[0]?.raw_data)).toBeGreaterThan(0);
      // The stack of the manifest (384 slots of 16 bytes), and room left for the C heap beside the XS heap.
      const instruments = device!.instruments();
      expect(instruments[instruments.length - 1]['Stack available']).toBe(esp32Creation(ROOT).stack * 16);
      console.log('C heap free beside the XS heap: ' + Math.min(...instruments.map((i) => i['System bytes free'])) + ' B at least');
      expect(device!.trace.join('\n')).not.toMatch(/memory full|abort/i);
    }, 300_000);

    it('traces each command written to its command resource once', async () => {
      const from = device!.lines.length;
      const created = (await api().createFeed(COMMAND, 1)).json.payload as { id_resource_feed: number };
      const line = await device!.waitFor(/^feed-agent: command /, 30_000, from);
      expect(device!.lines[line]).toBe('feed-agent: command true for resource ' + COMMAND + ' (feed ' + created.id_resource_feed + ')');
      await sleep(5_000);
      expect(device!.lines.slice(from).filter((l) => l.startsWith('feed-agent: command '))).toHaveLength(1);
    }, 60_000);

    // lin.test.ts takes one reading a second for granted, so that a gap in the uptime values is a lost
    // reading and a repeat one stored twice. Here the emulated board stalls for seconds while littlefs
    // writes (each flash operation of ESP-IDF's driver stops the other core, an exchange QEMU makes slow on
    // a loaded machine), and the sampler skips the seconds it missed. So the device's own counts decide:
    // what it sent equals what the service stored, and every sample it accepted is accounted for.
    it('loses nothing while the service is down, and writes its queue to flash only then', async () => {
      const before = storage();
      const stored = uptimes().length;
      await waitUntil('ten more uptime feeds', () => uptimes().length >= stored + 10, 60_000);
      expect(storage().equals(before), 'the storage partition changed while the service answered').toBe(true);
      await stop();
      await waitUntil('the queue written to the storage partition', () => !storage().equals(before), 60_000);
      await sleep(4_000);
      await start();
      const down = uptimes().length;
      await waitUntil('the outage delivered', () => uptimes().length >= down + 10, 180_000);
      const status = await accounted(0);
      const values = uptimes();
      console.log('outage: ' + status.sent + ' sent, ' + proxy.stored.length + ' stored; uptime seconds without a reading: ' + skipped(values) + ', values repeated: ' + repeated(values));
      expect(ascending(values), values.join(',')).toBe(true);
    }, 420_000);

    it('delivers what its flash queue held after the board was reset in the middle of an outage', async () => {
      const before = storage();
      await stop();
      await waitUntil('a burst in the storage partition', () => !storage().equals(before), 60_000);
      // The burst is committed when its segment file closes: wait until the partition has been still for 3 s.
      let last = storage();
      let still = Date.now();
      await waitUntil('the burst written whole', () => {
        const now = storage();
        if (!now.equals(last)) [last, still] = [now, Date.now()];
        return Date.now() - still > 3_000;
      }, 120_000);
      // Every sample this boot accepted is stored or queued (its sends stopped with the outage): a second
      // missing between the last one stored and the first one restored is one it did not sample.
      const unsent = (await accounted(0)).queued;
      await device!.stop();
      const stored = proxy.stored.length;
      const lastBefore = Math.max(...uptimes());
      await start();
      device = await power();
      const line = device.lines[await device.waitFor(/restored \d+ unacknowledged samples/, 180_000)];
      const restored = Number(/restored (\d+)/.exec(line)?.[1]);
      // All but the readings taken after the last burst, which a reset loses by design.
      expect(restored).toBeGreaterThanOrEqual(unsent - SPILL_EVERY);
      await device.waitFor(/^feed-agent: started$/, 120_000);
      await waitUntil('the flash queue delivered and the second boot feeding', () => proxy.stored.length >= stored + restored + 10, 180_000);
      await accounted(stored, restored);
      // The flash queue's samples come first, oldest first, each once: the first boot's readings after the
      // last one stored before the outage. Then the second boot's, which count from 0 again.
      const uptime = (feeds: typeof proxy.stored): number[] => feeds.filter((f) => f.id_resource === UPTIME).map((f) => Number(f.raw_data));
      const recovered = uptime(proxy.stored.slice(stored, stored + restored));
      const secondBoot = uptime(proxy.stored.slice(stored + restored));
      console.log('reset: ' + restored + ' restored, uptime ' + recovered[0] + '…' + recovered[recovered.length - 1] + ' after ' + lastBefore + '; seconds without a reading: ' + skipped([lastBefore, ...recovered]) + ' and ' + skipped(secondBoot) + ', values repeated: ' + repeated(recovered) + ' and ' + repeated(secondBoot));
      expect(recovered.length).toBeGreaterThan(0);
      expect(recovered[0]).toBeGreaterThan(lastBefore);
      expect(ascending(recovered), recovered.join(',')).toBe(true);
      expect(secondBoot.every((v) => v < recovered[0]), secondBoot.join(',')).toBe(true);
      expect(ascending(secondBoot), secondBoot.join(',')).toBe(true);
    }, 720_000);

    it('delivers over TLS to a terminator whose chain comes from a private CA', async () => {
      // The emulated board reaches no time server, and its clock starts at 1970: the certificates are
      // made valid from then (TLS checks their dates against the clock; a board sets it by SNTP).
      const front = await TlsFront.start(served.url, { ip: SERVICE.address, fromEpoch: true });
      let board: QemuRun | null = null;
      try {
        // The firmware with the private root among its resources, as ca=… names it.
        const app = front.app(join(OUT, 'tls'), join(ROOT, 'manifest.json'));
        const image = buildEsp32(tools as Esp32Tools, ROOT, app, OUT, ['-i'], { ...CONFIG, url: 'https://' + SERVICE.address, ca: 'test-ca.der' }, 'openeth');
        const tlsFlash = join(dir, 'tls-flash.bin');
        writeFlash(image, tlsFlash);
        board = await boot(tools as Esp32Tools, tlsFlash, { forwards: [{ address: SERVICE.address, port: 443, hostPort: front.counting.port }] }, UP);
        const [up, started] = [await board.waitFor(/^open_eth: IP address /, 120_000), await board.waitFor(/^feed-agent: started$/, 300_000)];
        // Started once the lookup (operation 2) was answered: the first TLS handshake is in this time.
        console.log('TLS: from the address to started (handshake and lookup): ' + (board.at[started] - board.at[up]) + ' ms');
        await until('two flushes over TLS', () => (lastStatus(board!.lines)?.sent ?? 0) >= 40, 300_000, board);
        const last = (await api().lastFeeds(String(UPTIME), '?silent=true')).json.payload as (Feed | null)[];
        expect(Number(last[0]?.raw_data)).toBeGreaterThan(10);
        // One connection, kept open: one TLS handshake for every request so far.
        expect(front.counting.connections).toBe(1);
        expect(board.trace.join('\n')).not.toMatch(/certificate|memory full|abort/i);
      } finally {
        await board?.stop();
        await front.close();
      }
    }, 3_600_000);
  });
});

describe.skipIf(typeof qemu !== 'string')('the ESP32\'s random source in QEMU (esp_random)', () => {
  let dir = '';
  const recorders: Server[] = [];
  const boots: QemuRun[] = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'feed-agent-esp32-seed-'));
  });

  afterAll(async () => {
    for (const boot of boots) await boot.stop();
    for (const recorder of recorders) recorder.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('draws different waits at two boots of the same image', async () => {
    // For each boot, a service that takes every connection and closes it unanswered once it has read the
    // request: every exchange fails. It notes when each flush (a POST, operation 4) came: the first at the
    // flush period (10 s) after the start, the same at every boot; then each retry after the backoff,
    // drawn from the agent's random source, which the firmware seeds from esp_random.
    const posts: number[][] = [[], []];
    for (const times of posts) {
      const recorder = createServer((socket: Socket) => {
        socket.on('error', () => undefined);
        socket.once('data', (request) => {
          if (request.toString('latin1').startsWith('POST ')) times.push(Date.now());
          socket.destroy();
        });
      });
      await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
      recorders.push(recorder);
    }
    for (const [i, recorder] of recorders.entries()) {
      const flash = join(dir, 'flash-' + i + '.bin');
      writeFlash(image(), flash);
      boots.push(await boot(tools as Esp32Tools, flash, { forwards: [{ ...SERVICE, hostPort: (recorder.address() as AddressInfo).port }] }, UP));
    }
    const POSTS = 6;
    const started = await Promise.all(boots.map((boot) => boot.waitFor(/^feed-agent: started$/, 300_000)));
    await until('six flushes of each boot', () => posts.every((times) => times.length >= POSTS), 300_000);
    const [a, b] = posts.map((times, i) => times.slice(0, POSTS).map((t) => t - boots[i].at[started[i]]));
    console.log('ms after the start of the flushes, boot 1: ' + a.join(', ') + '; boot 2: ' + b.join(', '));
    // The same draws would leave the boots apart by the emulator's timing alone, as the first flush is:
    // about 0.1 s on this machine. Different draws part them by seconds.
    expect(Math.max(...a.map((ms, i) => Math.abs(ms - b[i])))).toBeGreaterThan(1000);
  }, 900_000);
});
