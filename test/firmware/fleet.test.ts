// One firmware image for a fleet, and its updates over the air, on QEMU's esp32 machine (docs/firmware.md,
// "A fleet"): the image built once without any device's key or token; two flash images, each with the
// preferences `feed-agent provision` wrote into its nvs partition, delivering to one `feed-agent serve`
// under their own keys; then, on the first board, the download of 1.1.0 that the service serves
// (`serve --firmware DIR`) into the other slot; 1.1.0 booted on trial from it, confirming itself once it
// delivered; a 1.2.0 that cannot deliver, reset on trial and rolled back by the bootloader; and a power cut
// in the middle of a download, after which the running image boots with its backlog whole. This QEMU
// refuses a downloaded image at esp_ota_end, so the test writes otadata as ESP-IDF would have next. Runs where the ESP32 tools are
// (IDF_PATH, or ESP_ROOT with their env.sh, and QEMU with the esp32 machine); elsewhere it is skipped.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseSeed } from '../../src/service/seed';
import { killAll } from '../support/children';
import { FaultProxy } from '../support/fault-proxy';
import { Served } from '../support/serve';
import { buildEsp32, findEsp32 } from './esp32';
import type { Esp32Image, Esp32Tools } from './esp32';
import { until } from './line-log';
import { GUEST_SERVICE, boot, findQemu, readPartition, writeFlash, writePartition } from './qemu';
import type { QemuRun } from './qemu';

const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const tools = findEsp32(ROOT);
const qemu = typeof tools === 'string' ? { skip: tools } : findQemu(tools);
const SEED = JSON.parse(readFileSync(join(ROOT, 'examples', 'device-seed.json'), 'utf8'));
const FIRST = parseSeed(JSON.stringify(SEED)).devices[0];
/** A second board of the fleet: its own key, token and resources (401…), on the first one's subtypes. */
const SECOND = {
  ...SEED.devices[0],
  public_key: '4D71BF5A9E02D4F86A1C7B31',
  token: 'A04E1A7C2B5D8E3F60A1C4D8',
  name: 'ESP32 Dev Board 2',
  resources: SEED.devices[0].resources.map((r: { id_resource: number }) => ({ ...r, id_resource: r.id_resource + 100 })),
};
/** The update source: the service itself, reached without the fault proxy, so that an outage of the interface leaves it. */
const SOURCE = { address: '10.0.2.101', port: 80 };
const UP = /^open_eth: IP address /;
const SPILL_EVERY = 20;
/** The one image of the fleet: no key, no token; the first board's resources and the service's url as build defaults. */
const CONFIG = {
  url: 'http://' + GUEST_SERVICE.address,
  resources: 'uptime:301,heap:302,command:304',
  every: 1000,
  statusEvery: 2000,
  spillEvery: SPILL_EVERY,
  updateEvery: 5000,
};
const OUT = join(ROOT, 'node_modules', '.cache', 'feed-agent-esp32-fleet');
/** ESP-IDF's esp_ota_img_states_t. */
const OTA_NEW = 0, OTA_VALID = 2, OTA_ABORTED = 4;

/**
 * Writes the otadata sector `n` (of two) as ESP-IDF's esp_ota_select_entry_t: the sequence number whose
 * (seq - 1) % 2 is the app slot to boot, 20 bytes of label, the state, and the CRC of the sequence number.
 */
function writeOtadata(flash: string, n: number, seq: number, state: number): void {
  const entry = Buffer.alloc(0x1000, 0xff);
  entry.writeUInt32LE(seq, 0);
  entry.writeUInt32LE(state, 24);
  entry.writeUInt32LE(crc32(entry.subarray(0, 4), 0xffffffff) >>> 0, 28);
  const data = readPartition(flash, 'otadata');
  const both = Buffer.from(data);
  entry.copy(both, n * 0x1000);
  writePartition(flash, 'otadata', both);
}

/** The two otadata entries' sequence numbers and states. */
function otadata(flash: string): { seq: number; state: number }[] {
  const data = readPartition(flash, 'otadata');
  return [0, 0x1000].map((at) => ({ seq: data.readUInt32LE(at), state: data.readUInt32LE(at + 24) }));
}

if (typeof tools === 'string') console.log('ESP32 fleet tests skipped: ' + tools);
else if (typeof qemu !== 'string') console.log('ESP32 fleet emulator tests skipped: ' + qemu.skip);
afterAll(killAll);

describe.skipIf(typeof tools === 'string' || typeof qemu !== 'string')('one image for a fleet, updated over the air, in QEMU\'s esp32 machine', () => {
  let dir = '';
  let firmware = '';
  let staged = '';
  let flashes: string[] = [];
  let served: Served;
  let proxy: FaultProxy;
  let boards: (QemuRun | null)[] = [null, null];

  const cli = (): string => join(inject('built'), 'cli.js');
  const forwards = () => [
    { ...GUEST_SERVICE, hostPort: Number(new URL(proxy.url).port) },
    { ...SOURCE, hostPort: Number(new URL(served.url).port) },
  ];
  const power = async (n: number): Promise<QemuRun> => (boards[n] = await boot(tools as Esp32Tools, flashes[n], { forwards: forwards() }, UP, 180_000));
  const stored = (resource: number): number => proxy.stored.filter((f) => f.id_resource === resource).length;
  /** Builds `version` with `config` over the fleet's and keeps its app image as `version`.bin. */
  const build = (version: string, config: Record<string, string | number> = {}): Esp32Image => {
    const image = buildEsp32(tools as Esp32Tools, ROOT, ROOT, OUT, ['-i'], { ...CONFIG, version, ...config }, 'openeth');
    copyFileSync(image.app, join(staged, version + '.bin'));
    return image;
  };
  const offer = (version: string): void => copyFileSync(join(staged, version + '.bin'), join(firmware, version + '.bin'));
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'feed-agent-fleet-'));
    firmware = join(dir, 'firmware');
    staged = join(dir, 'staged');
    mkdirSync(firmware);
    mkdirSync(staged);
    build('1.1.0');
    build('1.2.0', { url: 'http://10.0.2.99' });
    const a = build('1.0.0');
    // Provisioned with the real command: the first board keeps the build's url and resources and gets an
    // update source; the second its own url and resources.
    const provision = (n: number, args: string[]): Buffer => {
      const file = join(dir, 'board' + n + '.nvs.bin');
      execFileSync(process.execPath, [cli(), 'provision', ...args, '--out', file]);
      return readFileSync(file);
    };
    const nvs = [
      provision(0, ['--publicKey', FIRST.public_key, '--token', FIRST.token, '--update', 'http://' + SOURCE.address + '/firmware']),
      provision(1, ['--publicKey', SECOND.public_key, '--token', SECOND.token, '--url', 'http://' + GUEST_SERVICE.address, '--resources', 'uptime:401,heap:402,command:404']),
    ];
    flashes = nvs.map((bytes, n) => {
      const flash = join(dir, 'flash' + n + '.bin');
      writeFlash(a, flash);
      writePartition(flash, 'nvs', bytes);
      return flash;
    });
    const seed = join(dir, 'seed.json');
    writeFileSync(seed, JSON.stringify({ ...SEED, devices: [SEED.devices[0], SECOND] }));
    served = await Served.start(cli(), ['--port', '0', '--seed', seed, '--firmware', firmware]);
    proxy = await FaultProxy.start(served.url);
  }, 3_600_000);

  afterAll(async () => {
    for (const b of boards) await b?.stop();
    await proxy?.close();
    served?.child.kill('SIGTERM');
    await served?.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  it('one image, two boards: each delivers under the key its preferences hold, and no token is on a UART', async () => {
    const [one, two] = await Promise.all([power(0), power(1)]);
    const start = (board: QemuRun): string => board.lines.find((l) => l.startsWith('feed-agent: device ')) ?? '';
    await until('both boards started', () => one.lines.includes('feed-agent: started') && two.lines.includes('feed-agent: started'), 300_000, one);
    expect(start(one)).toBe('feed-agent: device ' + FIRST.public_key + ' at ' + CONFIG.url + ': 2 sensors every 1000 ms, 1 command resource; provisioned: publicKey, token, update');
    expect(start(two)).toBe('feed-agent: device ' + SECOND.public_key + ' at ' + CONFIG.url + ': 2 sensors every 1000 ms, 1 command resource; provisioned: publicKey, token, url, resources');
    await until('both boards\' uptime stored', () => stored(301) >= 3 && stored(401) >= 3, 180_000, two);
    for (const [board, token] of [[one, FIRST.token], [two, SECOND.token]] as const) expect(board.lines.filter((l) => l.includes(token))).toEqual([]);
    await two.stop();
    boards[1] = null;
  }, 600_000);

  // Where this QEMU stops (docs/firmware.md, "Updates over the air"): the image lands whole in the other
  // slot, and ESP-IDF's esp_ota_end then refuses it ("New image failed verification"), so the switch, the
  // confirmation and the rollback are tested on stand-ins (test/moddable/unit/update.test.ts).
  it('downloads 1.1.0, offered by the service, whole into the other app slot; a refused image is asked for again, later each time', async () => {
    const board = boards[0]!;
    await board.waitFor(/^feed-agent: update: 1\.0\.0 runs/, 60_000);
    const from = board.lines.length;
    offer('1.1.0');
    const image = readFileSync(join(firmware, '1.1.0.bin'));
    await board.waitFor(/^feed-agent: update: 1\.1\.0 offered, \d+ bytes: downloading$/, 60_000, from);
    await until('the other slot holding 1.1.0 byte for byte', () => readPartition(flashes[0], 'ota_1').subarray(0, image.length).equals(image), 300_000, board);
    const done = await board.waitFor(/^feed-agent: update: 1\.1\.0: |^feed-agent: update: 1\.1\.0 written/, 120_000, from);
    console.log('update 1.0.0 to 1.1.0 in QEMU: ' + image.length + ' bytes in the slot in ' + (board.at[done] - board.at[from]) / 1000 + ' s; then: ' + board.lines[done]);
    // Two refusals in a row wait longer than one (the one backoff), though the offer was read each time.
    const waits: number[] = [];
    await until('three refusals', () => {
      waits.splice(0, waits.length, ...board.lines.slice(from).flatMap((l) => /^feed-agent: update: 1\.1\.0: .*; again in (\d+) s$/.exec(l)?.[1] ?? []).map(Number));
      return waits.length >= 3 || board.lines.slice(from).some((l) => l.includes('1.1.0 written'));
    }, 300_000, board);
    if (waits.length >= 3) expect(waits[2]).toBeGreaterThan(waits[0]);
    unlinkSync(join(firmware, '1.1.0.bin'));
  }, 1_200_000);

  // From here, what ESP-IDF's esp_ota_set_boot_partition would have written after esp_ota_end, the test
  // writes into otadata itself: the bootloader's choice, the trial, the confirmation and the rollback are
  // the firmware's and the bootloader's own.
  it('boots the other slot on trial once otadata names it, and 1.1.0 confirms itself once it delivered', async () => {
    await boards[0]!.stop();
    const image = readFileSync(join(staged, '1.1.0.bin'));
    // The refused image may have been fetched again while the board ran: the slot as the download left it, else as served.
    if (!readPartition(flashes[0], 'ota_1').subarray(0, image.length).equals(image)) writePartition(flashes[0], 'ota_1', image);
    // esp_ota_set_boot_partition writes the sector that does not hold the running entry (seq 1, in sector 0).
    writeOtadata(flashes[0], 1, 2, OTA_NEW);
    const board = await power(0);
    await board.waitFor(/^feed-agent: update: 1\.1\.0 on trial: /, 180_000);
    const delivered = stored(301);
    await board.waitFor(/^feed-agent: update: 1\.1\.0 confirmed$/, 180_000);
    expect(stored(301)).toBeGreaterThan(delivered);
    expect(otadata(flashes[0])[1]).toEqual({ seq: 2, state: OTA_VALID });
    await board.stop();
    const again = await power(0);
    await again.waitFor(/^feed-agent: update: 1\.1\.0 runs/, 120_000);
    expect(again.lines.some((l) => l.includes('on trial'))).toBe(false);
  }, 900_000);

  it('a 1.2.0 that cannot deliver (a bad url built in), reset on trial, gives way to 1.1.0: the bootloader\'s rollback', async () => {
    await boards[0]!.stop();
    writePartition(flashes[0], 'ota_0', readFileSync(join(staged, '1.2.0.bin')));
    writeOtadata(flashes[0], 0, 3, OTA_NEW);
    let board = await power(0);
    await board.waitFor(/^feed-agent: update: 1\.2\.0 on trial: /, 180_000);
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(board.lines.some((l) => l.includes('1.2.0 confirmed'))).toBe(false);
    await board.stop();
    board = await power(0);
    await board.waitFor(/^feed-agent: update: 1\.1\.0 runs/, 120_000);
    expect(otadata(flashes[0])[0]).toEqual({ seq: 3, state: OTA_ABORTED });
    const delivered = stored(301);
    await until('1.1.0 delivering again', () => stored(301) >= delivered + 3, 180_000, board);
  }, 900_000);

  it('a power cut in the middle of a download starts the running image again, its backlog whole', async () => {
    let board = boards[0]!;
    // The entry that boots 1.1.0 (sector 1, seq 2). esp_ota_begin erases the other sector's entry (the
    // aborted 1.2.0), so that a half-written slot is never named: that one may change.
    const running = otadata(flashes[0])[1];
    expect(running).toEqual({ seq: 2, state: OTA_VALID });
    const storage = readPartition(flashes[0], 'storage');
    await proxy.setDown(true);
    proxy.dropConnections();
    await until('a burst of the queue in the storage partition', () => !readPartition(flashes[0], 'storage').equals(storage), 120_000, board);
    const beforeCut = proxy.stored.length;
    const from = board.lines.length;
    copyFileSync(join(staged, '1.0.0.bin'), join(firmware, '1.3.0.bin'));
    await board.waitFor(/^feed-agent: update: \d+ of \d+ bytes$/, 600_000, from);
    await board.stop();
    unlinkSync(join(firmware, '1.3.0.bin'));
    expect(otadata(flashes[0])[1], 'the boot slot\'s entry').toEqual(running);
    // The other sector names nothing to boot: still the aborted entry, or erased.
    expect([OTA_ABORTED, 0xffffffff]).toContain(otadata(flashes[0])[0].state);
    await proxy.setDown(false);
    board = await power(0);
    const restored = Number(/restored (\d+)/.exec(board.lines[await board.waitFor(/restored \d+ unacknowledged samples/, 180_000)])?.[1]);
    expect(restored).toBeGreaterThan(0);
    await board.waitFor(/^feed-agent: update: 1\.1\.0 runs/, 120_000);
    await until('the backlog delivered', () => proxy.stored.length - beforeCut >= restored, 300_000, board);
    console.log('power cut in a download: ' + restored + ' samples restored from flash and delivered');
  }, 1_800_000);
});
