// The firmware's settings, sensors and status line (platforms/moddable/firmware), on Node: what a build
// line's key=value pairs become, and what a person reading the trace sees when one is wrong.
import { describe, expect, it } from 'vitest';
import { readSettings } from '../../../platforms/moddable/firmware/settings';
import type { Settings } from '../../../platforms/moddable/firmware/settings';
import { firmwareActuators, firmwareSensors, rp2040Celsius } from '../../../platforms/moddable/firmware/sensors';
import { statusLine } from '../../../platforms/moddable/firmware/status';
import { createAgent } from '../../../src/core/agent';
import type { Feed } from '../../../src/core/wire/wire';

const GOOD = {
  url: 'http://192.168.1.20:8080',
  publicKey: '3C71BF5A9E02D4F86A1C7B30',
  token: 'SECRET-TOKEN-123',
  resources: 'uptime:301,heap:302,rssi:303,command:304',
  file: { root: '/mod/' },
};

function settings(extra: Record<string, unknown> = {}): Settings {
  const read = readSettings({ ...GOOD, ...extra });
  if (read.problems !== undefined) throw new Error(read.problems.join('; '));
  return read.settings;
}

describe('firmware settings', () => {
  it('reads the build line, with defaults for what it leaves out', () => {
    expect(settings({ every: '2000', queue: '256' })).toEqual({
      url: GOOD.url,
      publicKey: GOOD.publicKey,
      token: GOOD.token,
      resources: { uptime: 301, heap: 302, rssi: 303, command: 304 },
      every: 2000,
      commandEvery: 5000,
      queue: 256,
      spillEvery: 64,
      backlogBytes: 655_360,
      xsHeap: 0,
      statusEvery: 60000,
      ca: '',
      backlogPath: '/mod/feed-agent.q',
      ages: false,
      http: 'keep-alive',
      update: '',
      version: '0',
      updateEvery: 3_600_000,
      updateTrial: 600_000,
    });
    expect(settings({ http: 'classic' }).http).toBe('classic');
    expect(settings({ ages: '1', backlogBytes: '49152' })).toMatchObject({ ages: true, backlogBytes: 49_152 });
  });

  it('names every bad or missing key at once, and never repeats the token', () => {
    const read = readSettings({ url: 'ftp://x', token: '', resources: 'uptime:301,fan:9,heap:x,command:301', every: '10', ca: 'my-ca.pem', http: 'fetch', ages: 'yes', backlogBytes: '4096', file: GOOD.file });
    expect(read.problems).toEqual([
      'url: expected http(s)://host[:port][/path], without query or fragment, got "ftp://x"',
      'publicKey: missing (provision the device: feed-agent provision; or add publicKey=… to the mcconfig line)',
      'token: missing (provision the device: feed-agent provision; or add token=… to the mcconfig line)',
      'resources: "fan" is not one of uptime, heap, rssi, temperature, command (e.g. resources=uptime:201,heap:202,rssi:203,command:204)',
      'resources: "heap:x" is not role:id with a positive whole id (e.g. resources=uptime:201,heap:202,rssi:203,command:204)',
      'resources: resource 301 is given twice',
      'ca: expected the name of a .der resource, got "my-ca.pem"',
      'http: expected keep-alive or classic, got "fetch"',
      'ages: expected 0 or 1, got "yes"',
      'every: expected a whole number ≥ 50, got "10"',
      'backlogBytes: expected a whole number ≥ 12288, got "4096"',
    ]);
    const secret = readSettings({ ...GOOD, url: 'nope' });
    expect(JSON.stringify(secret)).not.toContain(GOOD.token);
  });
});

describe('firmware sensors', () => {
  /** `heap` null: a build without instrumentation. */
  const sources = (rssi: number | undefined, trace: string[] = [], heap: number | null = 30_000, temperatureAdc?: number) => ({
    now: () => 12_345,
    heapUsed: () => heap ?? undefined,
    rssi: () => rssi,
    temperatureAdc: () => temperatureAdc,
    trace: (text: string) => void trace.push(text),
  });

  it('feeds uptime in seconds, free heap from xsHeap, and RSSI where there is a radio', () => {
    const { sensors } = firmwareSensors(settings({ xsHeap: 88_064 }), sources(-61));
    expect(sensors.map((s) => [s.resource, s.read()])).toEqual([[301, 12], [302, 58_064], [303, -61]]);
  });

  it('leaves out what it cannot read, and says so', () => {
    const s = settings();
    const { sensors, skipped } = firmwareSensors(s, sources(undefined));
    expect(sensors.map((x) => x.resource)).toEqual([301]);
    expect(skipped).toEqual(['heap (no xsHeap in the config)', "rssi (this platform's Net reports no RSSI)"]);
    // A release build has no instrumentation: the heap cannot be read, whatever xsHeap says.
    const release = settings({ xsHeap: 88_064 });
    const fed = firmwareSensors(release, sources(-60, [], null));
    expect(fed.sensors.map((x) => x.resource)).toEqual([301, 303]);
    expect(fed.skipped).toEqual(['heap (no instrumentation in this build: build with -d or -i)']);
  });

  it('feeds the RP2040\'s temperature in degrees Celsius where the board has the sensor, and says when it has not', () => {
    const s = settings({ resources: 'uptime:301,temperature:305' });
    // 876 of 4096 is 0.7058 V, 27 °C on the datasheet's line; the voltage falls as the die warms.
    const { sensors, skipped } = firmwareSensors(s, sources(undefined, [], null, 876));
    expect(sensors.map((x) => [x.resource, x.read()])).toEqual([[301, 12], [305, 27.1]]);
    expect(skipped).toEqual([]);
    expect(rp2040Celsius(950)).toBe(-7.5);
    expect(rp2040Celsius(800)).toBe(62.7);
    expect(firmwareSensors(s, sources(undefined)).skipped).toEqual(['temperature (no RP2040 temperature sensor on this board)']);
  });

  it('traces each command with its value and feed', async () => {
    const trace: string[] = [];
    const [actuator] = firmwareActuators(settings(), sources(undefined, trace));
    await actuator.handle(true, { id_resource_feed: 88, id_resource: 304, raw_data: '1', created_at: '' } as Feed);
    expect(trace).toEqual(['feed-agent: command true for resource 304 (feed 88)\n']);
  });
});

describe('firmware status line', () => {
  it('says what the agent holds and did, never the token', () => {
    const agent = createAgent({ request: () => new Promise(() => undefined), now: () => 0, setTimer: () => 0, clearTimer: () => undefined }, {
      url: GOOD.url,
      publicKey: GOOD.publicKey,
      token: GOOD.token,
      resources: [301],
    });
    const line = statusLine(agent.stats());
    expect(line).toBe('feed-agent: queued 0/1024, accepted 0, sent 0 in 0 batches, retries 0, dropped 0, rejected 0, set aside 0, unresolved 0, requests 0, commands 0\n');
    expect(line).not.toContain(GOOD.token);
    // The description's I2C sensors that do not answer now (docs/peripherals.md).
    expect(statusLine(agent.stats(), ['SHT3x at 0x44 on pins 4/5'])).toBe(line.replace('\n', ', not answering: SHT3x at 0x44 on pins 4/5\n'));
  });
});
