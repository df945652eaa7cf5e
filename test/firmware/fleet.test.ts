// One firmware image for a fleet, and its updates over the air, on QEMU's esp32 machine (docs/firmware.md,
// "A fleet"): the image built once without any device's key or token; two flash images, each with the
// preferences `feed-agent provision` wrote into its nvs partition, delivering to one `feed-agent serve`
// under their own keys. Then, on the first board, every update is the firmware's own, from what the service
// serves (`serve --firmware DIR`): a damaged image refused by the slot; 1.1.0 downloaded into the other slot,
// made the boot slot, restarted into on trial and confirmed once it delivered; a 1.2.0 that cannot deliver,
// reset on trial and rolled back by the bootloader; a 1.2.1 that cannot deliver, giving way by itself after
// its trial; a 1.2.2 that cannot start, giving way at once; and a power cut in the middle of a download,
// after which the running image boots with its backlog whole. Runs where the ESP32 tools are (IDF_PATH,
// or ESP_ROOT with their env.sh, and QEMU with the esp32 machine); elsewhere it is skipped.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
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
/** ESP-IDF's esp_ota_img_states_t, and an erased entry. */
const OTA_VALID = 2, OTA_INVALID = 3, OTA_ABORTED = 4, ERASED = 0xffffffff;
/** How long 1.2.1 has to deliver (s; updateTrial is in ms) before it gives way by itself. */
const TRIAL_S = 30;

interface OtaEntry {
  seq: number;
  state: number;
}

/** The two otadata entries (ESP-IDF's esp_ota_select_entry_t): sequence numbers and states. */
function otadata(flash: string): OtaEntry[] {
  const data = readPartition(flash, 'otadata');
  return [0, 0x1000].map((at) => ({ seq: data.readUInt32LE(at), state: data.readUInt32LE(at + 24) }));
}

/** The app slot an entry names: (seq - 1) % 2, with two of them. */
const slotOf = (entry: OtaEntry): string => 'ota_' + ((entry.seq - 1) % 2);

/** The entry the bootloader boots: the highest sequence number of those not erased, invalid or aborted. */
function bootEntry(flash: string): OtaEntry | undefined {
  return otadata(flash)
    .filter((e) => e.seq !== ERASED && e.state !== OTA_INVALID && e.state !== OTA_ABORTED)
    .sort((x, y) => y.seq - x.seq)[0];
}

/** The entry naming `slot`, if any. */
const entryFor = (flash: string, slot: string): OtaEntry | undefined => otadata(flash).find((e) => e.seq !== ERASED && slotOf(e) === slot);

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
    build('1.2.1', { url: 'http://10.0.2.99', updateTrial: TRIAL_S * 1000 });
    build('1.2.2', { updateTrial: 30 }); // milliseconds: below the least, 1000, so the image cannot start
    // 1.0.5: 1.1.0 with one byte of its code changed after the build, as a bad download or a bad disk would
    // leave it. The service serves it with its own SHA-256, so only the image's own hash can catch it.
    const damaged = readFileSync(join(staged, '1.1.0.bin'));
    damaged[0x8000] ^= 0xff;
    writeFileSync(join(staged, '1.0.5.bin'), damaged);
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

  const escaped = (version: string): string => version.replace(/\./g, '\\.');
  /** The waits the board announced after a refusal of `version` since line `from`. */
  const waitsAfter = (board: QemuRun, version: string, from: number): number[] =>
    board.lines.slice(from).flatMap((l) => new RegExp('^feed-agent: update: ' + escaped(version) + ': .*; again in (\\d+) s$').exec(l)?.[1] ?? []).map(Number);

  /**
   * The board after its firmware restarted it (esp_restart), once its network is up again: the same QEMU;
   * or, where this QEMU aborted in that restart (now and then, as the second core starts: "assertion
   * failed: (cpu->halted)" in its CPU loop), the board powered on again, which is what the restart leaves
   * it: the flash file holds all the firmware wrote before it.
   */
  const restarted = async (n: number, from: number): Promise<{ board: QemuRun; from: number }> => {
    const board = boards[n]!;
    try {
      const reset = await board.waitFor(/^rst:0x/, 60_000, from);
      await board.waitFor(UP, 120_000, reset);
      return { board, from: reset };
    } catch (e) {
      if (board.alive) throw e;
      console.log('QEMU ended in the firmware\'s restart; powered on again. Its UART:\n' + board.lines.slice(-3).join('\n'));
      await board.stop();
      return { board: await power(n), from: 0 };
    }
  };

  /** Offers `version`; the board downloads it, makes it the boot slot and restarts into it. */
  const takes = async (version: string): Promise<{ board: QemuRun; from: number }> => {
    const from = boards[0]!.lines.length;
    offer(version);
    const written = await boards[0]!.waitFor(new RegExp('^feed-agent: update: ' + escaped(version) + ' written to the other slot; restarting into it$'), 600_000, from);
    return restarted(0, written);
  };
  /** 1.1.0 runs again after `version` gave way, from ota_1, and ota_0, where `version` was, is marked `state`. */
  const backTo110 = async (version: string, board: QemuRun, from: number, state: number): Promise<void> => {
    const v = escaped(version);
    await board.waitFor(new RegExp('^feed-agent: update: ' + v + ' did not confirm itself; 1\\.1\\.0 runs again, and ' + v + ' is not taken again$'), 180_000, from);
    expect(entryFor(flashes[0], 'ota_0')?.state).toBe(state);
    expect(slotOf(bootEntry(flashes[0])!)).toBe('ota_1');
  };

  it('refuses a damaged image at the end of its download: the boot slot stays, and it is asked for again, later each time', async () => {
    const board = boards[0]!;
    await board.waitFor(/^feed-agent: update: 1\.0\.0 runs/, 60_000);
    const before = otadata(flashes[0]);
    const from = board.lines.length;
    offer('1.0.5');
    await board.waitFor(/^feed-agent: update: 1\.0\.5 offered, \d+ bytes: downloading$/, 60_000, from);
    await board.waitFor(/^feed-agent: update: 1\.0\.5: the slot refused the image: /, 300_000, from);
    // ESP-IDF's own check of the image, in esp_ota_end: its appended SHA-256 no longer matches.
    expect(board.lines.slice(from).some((l) => /esp_image: (Image hash failed|Checksum failed)/.test(l))).toBe(true);
    await until('three refusals', () => waitsAfter(board, '1.0.5', from).length >= 3, 600_000, board);
    const waits = waitsAfter(board, '1.0.5', from);
    expect(waits[2]).toBeGreaterThan(waits[0]);
    unlinkSync(join(firmware, '1.0.5.bin'));
    expect(otadata(flashes[0])).toEqual(before);
    expect(board.lines.slice(from).some((l) => l.includes('restarting'))).toBe(false);
  }, 1_200_000);

  it('takes 1.1.0 from the service: into the other slot whole, made the boot slot, restarted into on trial, confirmed once it delivered', async () => {
    const board = boards[0]!;
    const from = board.lines.length;
    offer('1.1.0');
    const image = readFileSync(join(firmware, '1.1.0.bin'));
    const offered = await board.waitFor(/^feed-agent: update: 1\.1\.0 offered, \d+ bytes: downloading$/, 120_000, from);
    const written = await board.waitFor(/^feed-agent: update: 1\.1\.0 written to the other slot; restarting into it$/, 600_000, from);
    console.log('update 1.0.0 to 1.1.0 in QEMU: ' + image.length + ' bytes downloaded and checked in ' + (board.at[written] - board.at[offered]) / 1000 + ' s');
    expect(readPartition(flashes[0], 'ota_1').subarray(0, image.length).equals(image)).toBe(true);
    // Restarted by the firmware: the bootloader takes the new slot, and the image starts on trial.
    const after = await restarted(0, written);
    await after.board.waitFor(/^feed-agent: update: 1\.1\.0 on trial: /, 180_000, after.from);
    const delivered = stored(301);
    await after.board.waitFor(/^feed-agent: update: 1\.1\.0 confirmed$/, 180_000, after.from);
    expect(stored(301)).toBeGreaterThan(delivered);
    expect(bootEntry(flashes[0])).toMatchObject({ state: OTA_VALID });
    expect(slotOf(bootEntry(flashes[0])!)).toBe('ota_1');
    unlinkSync(join(firmware, '1.1.0.bin'));
    await after.board.stop();
    const again = await power(0);
    await again.waitFor(/^feed-agent: update: 1\.1\.0 runs/, 120_000);
    expect(again.lines.some((l) => l.includes('on trial'))).toBe(false);
  }, 1_200_000);

  it('a 1.2.0 that cannot deliver (a bad url built in), reset while on trial, gives way to 1.1.0: the bootloader\'s rollback; 1.1.0 does not take it again', async () => {
    const after = await takes('1.2.0');
    let board = after.board;
    await board.waitFor(/^feed-agent: update: 1\.2\.0 on trial: /, 180_000, after.from);
    expect(entryFor(flashes[0], 'ota_0')?.state).not.toBe(OTA_VALID);
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(board.lines.some((l) => l.includes('1.2.0 confirmed'))).toBe(false);
    await board.stop();
    board = await power(0);
    await backTo110('1.2.0', board, 0, OTA_ABORTED);
    const delivered = stored(301);
    await until('1.1.0 delivering again', () => stored(301) >= delivered + 3, 180_000, board);
    // Three asks of the source (updateEvery 5 s) with 1.2.0 still offered: none downloads it.
    const asked = board.lines.length;
    await new Promise((resolve) => setTimeout(resolve, 20_000));
    expect(board.lines.slice(asked).filter((l) => l.includes('1.2.0 offered'))).toEqual([]);
    unlinkSync(join(firmware, '1.2.0.bin'));
  }, 1_200_000);

  it('a 1.2.1 that cannot deliver gives way by itself once its trial is over, and 1.1.0 delivers what it sampled', async () => {
    const trial = await takes('1.2.1');
    const onTrial = await trial.board.waitFor(/^feed-agent: update: 1\.2\.1 on trial: /, 180_000, trial.from);
    const gaveWay = await trial.board.waitFor(new RegExp('^feed-agent: update: 1\\.2\\.1 delivered nothing in ' + TRIAL_S + ' s: back to the image before it$'), (TRIAL_S + 60) * 1000, onTrial);
    // Restarted by the firmware into the image before it, its queue restored from flash.
    const back = await restarted(0, gaveWay);
    const board = back.board;
    await backTo110('1.2.1', board, back.from, OTA_INVALID);
    const restoredAt = board.lines.slice(back.from).find((l) => /restored \d+ unacknowledged samples/.test(l));
    const restored = Number(/restored (\d+)/.exec(restoredAt ?? '')?.[1] ?? 0);
    expect(restored).toBeGreaterThan(0);
    const before = proxy.stored.length;
    await until('what 1.2.1 sampled, delivered by 1.1.0', () => proxy.stored.length - before >= restored, 180_000, board);
    unlinkSync(join(firmware, '1.2.1.bin'));
    console.log('1.2.1 gave way after its ' + TRIAL_S + ' s trial: ' + restored + ' samples it took restored by 1.1.0 and delivered');
  }, 1_200_000);

  it('a 1.2.2 that cannot start (a bad setting built in) gives way at once, waiting neither for a reset nor for its trial', async () => {
    const trial = await takes('1.2.2');
    const said = await trial.board.waitFor(/^feed-agent: config: updateTrial: /, 180_000, trial.from);
    const gaveWay = await trial.board.waitFor(/^feed-agent: update: 1\.2\.2 cannot start on trial: back to the image before it$/, 10_000, said);
    const back = await restarted(0, gaveWay);
    await backTo110('1.2.2', back.board, back.from, OTA_INVALID);
    unlinkSync(join(firmware, '1.2.2.bin'));
  }, 1_200_000);

  it('a power cut in the middle of a download starts the running image again, its backlog whole', async () => {
    let board = boards[0]!;
    // The entry that boots 1.1.0. esp_ota_begin erases the other one (1.2.2's), so that a half-written slot
    // is never named: that one may change.
    const running = bootEntry(flashes[0]);
    expect(slotOf(running!)).toBe('ota_1');
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
    expect(bootEntry(flashes[0]), 'the boot slot\'s entry').toEqual(running);
    await proxy.setDown(false);
    board = await power(0);
    const restored = Number(/restored (\d+)/.exec(board.lines[await board.waitFor(/restored \d+ unacknowledged samples/, 180_000)])?.[1]);
    expect(restored).toBeGreaterThan(0);
    await board.waitFor(/^feed-agent: update: 1\.1\.0 runs/, 120_000);
    await until('the backlog delivered', () => proxy.stored.length - beforeCut >= restored, 300_000, board);
    console.log('power cut in a download: ' + restored + ' samples restored from flash and delivered');
  }, 1_800_000);
});
