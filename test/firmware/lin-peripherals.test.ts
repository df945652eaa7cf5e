// The README's description of a Pico W greenhouse (examples/pico-greenhouse: a door contact, an SHT3x, a
// relay) built for lin with the real Moddable SDK, against the real local service and its dashboard in
// Chromium, end to end: the readings the test drives reach the dashboard, a command written on the
// dashboard's switch drives the relay's pin, and the level applied comes back on its state resource. The
// simulator has no pins: lin's board gives stand-ins in files (pins=<folder>, platforms/moddable/lin/board.ts)
// that the test writes and reads; the SDK's real sht3x driver reads the SHT3x the test plays there. The real
// IO classes run in the Pico W's image in rp2040js (pico.test.ts). Runs where the SDK and Chromium are.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSeed } from '../../src/service/seed';
import { startService } from '../../src/service';
import type { RunningService } from '../../src/service';
import type { Feed } from '../../src/core/wire/wire';
import { launchChromium } from '../support/chromium';
import * as client from '../support/client';
import type { Chromium } from '../support/chromium';
import { Simulator, buildApp, findSdk } from './sdk';
import type { Sdk } from './sdk';
import { SHT3X_MEASURE, SHT3X_STATUS, sht3xMeasurement, sht3xStatus } from './sht3x';

const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const APP = join(ROOT, 'examples', 'pico-greenhouse');
const sdk = findSdk(ROOT);
const SEED = parseSeed(readFileSync(join(APP, 'seed.json'), 'utf8'));
const DEVICE = SEED.devices[0];
const WAIT = { timeout: 30_000 };

if (typeof sdk === 'string') console.log('firmware peripheral tests skipped: ' + sdk);

const hex = (bytes: number[]): string => bytes.map((b) => b.toString(16).padStart(2, '0')).join('');
const word = (n: number): string => n.toString(16).padStart(4, '0');

describe.skipIf(typeof sdk === 'string')('the README\'s greenhouse description on a lin build, with the local service and its dashboard', () => {
  let dir = '';
  let pins = '';
  let service: RunningService;
  let browser: Chromium;
  let device: Simulator | null = null;
  /** The SHT3x the test plays: what the driver's measurement command and status read answer. */
  const playSht3x = (celsius: number, percent: number): void =>
    writeFileSync(join(pins, 'i2c-4-5-44'), JSON.stringify({ [word(SHT3X_MEASURE)]: hex(sht3xMeasurement(celsius, percent)), [word(SHT3X_STATUS)]: hex(sht3xStatus()) }));
  const lastValue = (page: Page, id: number) => page.locator(`.card[data-resource="${id}"] .facts .value`).first().textContent();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'feed-agent-peripherals-'));
    pins = join(dir, 'pins');
    mkdirSync(pins);
    // The contact open (its pull-up holds the pin high), the air at 21.5 °C and 55 %.
    writeFileSync(join(pins, 'gpio15'), '1');
    playSht3x(21.5, 55);
    service = await startService({ seed: SEED, dashboard: {} });
    browser = await launchChromium();
    const library = buildApp(sdk as Sdk, APP, join(dir, 'build'), {
      url: service.url,
      publicKey: DEVICE.public_key,
      token: DEVICE.token,
      pins,
      statusEvery: 5000,
    }).library;
    device = new Simulator(sdk as Sdk, library);
  }, 600_000);

  afterAll(async () => {
    await device?.kill();
    await browser?.close();
    await service?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the readings it drives on the dashboard, and the relay\'s pin follows a command written there, its level reported back', async () => {
    await device!.waitFor(/^feed-agent: started$/, 60_000);
    expect(device!.lines.find((l) => l.startsWith('feed-agent: device '))).toBe('feed-agent: device ' + DEVICE.public_key + ' at ' + service.url + ': peripherals: door, air-temperature, air-humidity, irrigation');
    expect(device!.lines.filter((l) => l.startsWith('feed-agent: peripherals: '))).toEqual([]);
    const page = await browser.context.newPage();
    await page.goto(service.dashboard!.url);
    await expect.poll(() => page.locator('.device-head h2').allTextContents(), WAIT).toEqual(['Pico W Greenhouse']);
    await expect.poll(() => lastValue(page, 101), WAIT).toBe('0');
    await expect.poll(() => lastValue(page, 102), WAIT).toBe('21.5\u00a0°C');
    await expect.poll(() => lastValue(page, 103), WAIT).toBe('55%');
    // The relay's level at boot, reported once.
    await expect.poll(() => lastValue(page, 109), WAIT).toBe('0');
    expect(readFileSync(join(pins, 'gpio16'), 'utf8')).toBe('0');

    // Close the contact; warm the air.
    writeFileSync(join(pins, 'gpio15'), '0');
    playSht3x(24.3, 48.5);
    await expect.poll(() => lastValue(page, 101), WAIT).toBe('1');
    await expect.poll(() => lastValue(page, 102), WAIT).toBe('24.3\u00a0°C');
    await expect.poll(() => lastValue(page, 103), WAIT).toBe('48.5%');

    // The switch on the relay's card writes the command; the firmware's poll hands it to the relay once.
    const relay = page.locator('.card[data-resource="107"]');
    const toggle = relay.getByRole('switch', { name: 'Irrigation Relay' });
    // Its first poll only notes the state it found: a command is a feed written after it.
    await device!.waitFor(/^feed-agent: queued /, 30_000);
    const from = device!.lines.length;
    await toggle.click();
    await expect.poll(async () => (await relay.locator('.message').allTextContents())[0], WAIT).toMatch(/^stored 1 as feed \d+$/);
    const feed = Number((await relay.locator('.message').textContent())!.split(' ').pop());
    await device!.waitFor(new RegExp('^feed-agent: irrigation: pin 16 at 1 by command true \\(feed ' + feed + '\\)$'), 30_000, from);
    expect(readFileSync(join(pins, 'gpio16'), 'utf8')).toBe('1');
    await expect.poll(() => lastValue(page, 109), WAIT).toBe('1');
    await toggle.click();
    await device!.waitFor(/^feed-agent: irrigation: pin 16 at 0 by command false /, 30_000, from);
    expect(readFileSync(join(pins, 'gpio16'), 'utf8')).toBe('0');
    await expect.poll(() => lastValue(page, 109), WAIT).toBe('0');
    expect(device!.lines.slice(from).filter((l) => / by command /.test(l))).toHaveLength(2);
    await page.close();
  }, 240_000);

  it('says once that the SHT3x stopped answering, feeds the contact meanwhile, and says when it answers again', async () => {
    const api = client.device(service.url, DEVICE.public_key, DEVICE.token);
    const door = async (): Promise<string | undefined> => ((await api.lastFeeds('101', '?silent=true')).json.payload as (Feed | null)[])[0]?.raw_data;
    const from = device!.lines.length;
    unlinkSync(join(pins, 'i2c-4-5-44'));
    const at = await device!.waitFor(/^feed-agent: SHT3x at 0x44 on pins 4\/5 stopped answering: (write|read) failed; trying again every 30 s$/, 30_000, from);
    // The contact opens while the SHT3x is gone: fed as ever, before the SHT3x's next try.
    writeFileSync(join(pins, 'gpio15'), '1');
    await expect.poll(door, WAIT).toBe('0');
    expect(device!.lines.slice(at).filter((l) => /answers again/.test(l))).toEqual([]);
    playSht3x(20, 60);
    await device!.waitFor(/^feed-agent: SHT3x at 0x44 on pins 4\/5 answers again, after 1 failed try$/, 60_000, at);
    expect(device!.lines.slice(from).filter((l) => /stopped answering/.test(l))).toHaveLength(1);
  }, 120_000);

  it('reports the contact by exception, as its description says: a feed each time it changed, none for the reads between', async () => {
    const doorFeeds = async (): Promise<string[]> =>
      ((await (await fetch(service.url + '/_local/resources/101/feeds?limit=1000')).json()) as { payload: { raw_data: string[] } }).payload.raw_data;
    // Read every second since the first test began: open, closed, open again, and nothing between.
    expect(await doorFeeds()).toEqual(['0', '1', '0']);
    // Two status lines, 5 s apart: five reads of the contact, unchanged, held back.
    const from = device!.lines.length;
    const first = await device!.waitFor(/^feed-agent: queued /, 30_000, from);
    const second = device!.lines[await device!.waitFor(/^feed-agent: queued /, 30_000, first + 1)];
    expect(second).toMatch(/, held back \d+/);
    expect(await doorFeeds()).toEqual(['0', '1', '0']);
    writeFileSync(join(pins, 'gpio15'), '0');
    await expect.poll(doorFeeds, WAIT).toEqual(['0', '1', '0', '1']);
  }, 60_000);
});
