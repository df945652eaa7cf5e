// The dashboard's side of the local service over real HTTP (docs/dashboard.md): the local API's reads
// (devices, feeds over a time range in pages) change no counter and no presence; its write goes through
// operation 3's checks and is stored as the platform writing; access (loopback Host, password); the
// interface answers as before beside it; and the feed pages come from the index, by the query plan.
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FeedClient } from '../../src/core/wire/client';
import { Resources } from '../../src/core/resources/resources';
import { createHttp } from '../../platforms/node/host/http';
import { checkSeed, createService, demoFleetDevice, startService } from '../../src/service';
import type { RunningService } from '../../src/service';
import type { FeedPage, LocalState } from '../../src/service/local-wire';
import { csvField } from '../../src/service/feeds-csv';
import { FEED_PAGE_SQL, Store } from '../../src/service/store';
import { unitOf } from '../../src/service/units';
import { device, request } from '../support/client';
import type { Reply } from '../support/client';
import { A, B, SEED } from './fixtures';

const START = Date.UTC(2025, 5, 1, 12, 0, 0);
let now = START;
let service: RunningService;
let a: ReturnType<typeof device>;
let local: (path: string, method?: string, body?: unknown, headers?: Record<string, string>) => Promise<Reply>;

beforeAll(async () => {
  service = await startService({ seed: SEED, now: () => now, dashboard: {} });
  a = device(service.url, A.key, A.token);
  local = (path, method = 'GET', body, headers) =>
    request(`${service.url}/_local/${path}`, method, { ...(body !== undefined && { body: JSON.stringify(body) }), headers });
});
afterAll(() => service.close());

/** Every resource record the local API lists, by id. */
async function records(): Promise<Map<number, any>> {
  const reply = await local('devices');
  expect(reply.status, reply.text).toBe(200);
  return new Map(reply.json.payload.devices.flatMap((d: any) => d.resources.map((r: any) => [r.record.id_resource, r.record])));
}

/** Writes one feed on 74 through operation 4 at `at` (the service's clock); returns its id. */
async function feedAt(at: number, value: number): Promise<number> {
  now = at;
  const reply = await a.createFeeds([{ id_resource: 74, input: value }]);
  expect(reply.status, reply.text).toBe(200);
  return reply.json.payload[0].id_resource_feed;
}

describe('GET /_local/devices', () => {
  it('lists every device with its resources, their kind and records, without a token', async () => {
    const reply = await local('devices');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json');
    const { now: stamp, devices } = reply.json.payload;
    expect(stamp).toBe('2025-06-01 12:00:00');
    expect(devices.map((d: any) => [d.public_key, d.name, d.resources.map((r: any) => [r.record.id_resource, r.kind])])).toEqual([
      [A.key, 'Test Device', [[73, 'boolean'], [74, 'number'], [75, 'string']]],
      [B.key, 'Other Device', [[80, 'boolean']]],
    ]);
    expect(Object.keys(devices[0])).toEqual(['id_device', 'public_key', 'name', 'resources']);
    expect(devices[0].resources[1].record).toMatchObject({ name: 'Temperature', subtype: { name_i18n: 'Temperature', data_restriction_begin_range: -40 } });
    for (const secret of [A.token, B.token]) expect(reply.text).not.toContain(secret);
  });
});

describe('GET /_local/devices of a fleet', () => {
  it('gives one page: `limit` devices (10 unless asked, at most 100) of page `page`, and how many there are', async () => {
    const fleet = await startService({ demoDevices: 25, dashboard: {} });
    try {
      const list = async (query: string) => {
        const reply = await request(`${fleet.url}/_local/devices${query}`, 'GET');
        expect(reply.status, reply.text).toBe(200);
        return reply.json.payload as LocalState;
      };
      const keys = (state: LocalState) => state.devices.map((d) => d.public_key);
      const fleetKeys = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => demoFleetDevice(from + k).publicKey);
      const first = await list('');
      expect(first.total).toBe(25);
      expect(keys(first)).toEqual(fleetKeys(0, 10));
      expect(first.devices[9].resources.map((r) => r.record.id_resource)).toEqual(demoFleetDevice(9).resources);
      expect(keys(await list('?page=3'))).toEqual(fleetKeys(20, 25));
      expect(keys(await list('?page=2&limit=7'))).toEqual(fleetKeys(7, 14));
      expect(keys(await list('?limit=100'))).toEqual(fleetKeys(0, 25));
      expect(await list('?page=4')).toMatchObject({ total: 25, devices: [] });
      for (const [query, message] of [
        ['page=0', /page "0" is not a positive integer/],
        ['page=x', /page "x" is not a positive integer/],
        ['limit=101', /limit 101 is over the most a page holds, 100 devices/],
        ['page=1&page=2', /page is given more than once/],
      ] as const) {
        const reply = await request(`${fleet.url}/_local/devices?${query}`, 'GET');
        expect(reply.status, query).toBe(400);
        expect(reply.json.message).toMatch(message);
      }
    } finally {
      await fleet.close();
    }
  });
});

describe('a resource’s kind', () => {
  it('is the agent’s rule for a command’s value, subtype for subtype (an empty regex is none, 0..1 boolean only without one)', async () => {
    const restrictions: [regex: string | null, begin: number, end: number][] = [
      [null, 0, 1],
      ['', 0, 1],
      [null, 0, 2],
      ['', -40, 125],
      ['on|off', 0, 1],
      ['/^[a-z]+$/i', 0, 100],
    ];
    const ids = restrictions.map((_, i) => 901 + i);
    // As a seed file gives it: the optional fields filled by the check.
    const seed = checkSeed({
      subtypes: restrictions.map(([regex, begin, end], i) => ({
        id_resource_subtype: 1 + i, id_resource_type: 2, name: `S${i}`, data_restriction_regex: regex, data_restriction_begin_range: begin, data_restriction_end_range: end,
      })),
      devices: [{ public_key: 'KINDS', token: 'kinds-token', resources: ids.map((id, i) => ({ id_resource: id, id_resource_subtype: 1 + i, name: `R${id}`, lifetime: 5 })) }],
    });
    const kinds = await startService({ seed, dashboard: {} });
    try {
      const listed = (await request(`${kinds.url}/_local/devices`, 'GET')).json.payload.devices[0].resources.map((r: any) => r.kind);
      // The agent itself, after its start-up lookup of the same records, parsing a command of "1".
      const agent = new Resources(ids, { numberTag: () => -1 }, []);
      await agent.lookup(new FeedClient(createHttp(), { baseUrl: kinds.url, publicKey: 'KINDS', token: 'kinds-token', timeoutMs: 5_000 }), () => {});
      const parsed = ids.map((id) => typeof agent.parseCommand(id, '1'));
      expect(parsed).toEqual(['boolean', 'number', 'number', 'number', 'string', 'string']);
      expect(listed).toEqual(parsed);
    } finally {
      await kinds.close();
    }
  });
});

describe('what the page learns beside the record', () => {
  it('which resources take commands: those of the seed’s command_types (none without them), and the unit a number’s subtype names', async () => {
    const listed = async (url: string) =>
      (await request(`${url}/_local/devices`, 'GET')).json.payload.devices.flatMap((d: any) => d.resources.map((r: any) => [r.record.id_resource, r.command, r.unit]));
    // The fixture's seed has no command_types: nothing takes commands. 74's subtype is "Degrees Celsius".
    expect(await listed(service.url)).toEqual([[73, false, null], [74, false, '°C'], [75, false, null], [80, false, null]]);
    // With its on/off subtype's type (2) among them, 75 takes commands.
    const commands = await startService({ seed: { ...SEED, command_types: [2] }, dashboard: {} });
    try {
      expect(await listed(commands.url)).toEqual([[73, false, null], [74, false, '°C'], [75, true, null], [80, false, null]]);
    } finally {
      await commands.close();
    }
  });

  it('a unit only where the subtype’s English name or description names one', () => {
    const cases: [name: string, description: string | null, unit: string | null][] = [
      ['Temperature', 'Degrees Celsius', '°C'],
      ['Temperature', null, null],
      ['Temperature (°F)', 'degrees Fahrenheit', '°F'],
      ['Humidity', 'Relative humidity, %', '%'],
      ['Percentage', null, '%'],
      ['Counter', 'Monotonic pulse count', null],
      ['Pressure', 'Air pressure in hPa', 'hPa'],
      ['Signal strength', 'Wi-Fi RSSI, dBm', 'dBm'],
      ['Timestamps', 'Camps and lamps', null],
    ];
    for (const [name_i18n, description, unit] of cases) expect(unitOf({ name_i18n, description }), `${name_i18n} / ${description}`).toBe(unit);
  });
});

describe('GET /_local/resources/{id}/feeds', () => {
  const ids: number[] = [];
  beforeAll(async () => {
    // 12 feeds on 74, one every 10 s from START + 100 s; two share the last second.
    for (let i = 0; i < 11; i++) ids.push(await feedAt(START + 100_000 + i * 10_000, i));
    ids.push(await feedAt(START + 200_000, 11));
  });
  /** One page, its columns read back into feed records. */
  const page = async (query: string) => {
    const reply = await local(`resources/74/feeds?${query}`);
    expect(reply.status, reply.text).toBe(200);
    const columns = reply.json.payload as FeedPage;
    expect(Object.keys(columns)).toEqual(['id_resource', 'id_resource_feed', 'created_at', 'raw_data', 'next']);
    expect(columns.id_resource).toBe(74);
    expect(columns.created_at.length).toBe(columns.id_resource_feed.length);
    expect(columns.raw_data.length).toBe(columns.id_resource_feed.length);
    const feeds = columns.id_resource_feed.map((id, i) => ({ id_resource_feed: id, created_at: columns.created_at[i], raw_data: columns.raw_data[i] }));
    return { feeds, next: columns.next };
  };

  it('pages through a resource’s feeds in time order, each page continuing after the last', async () => {
    const seen: number[] = [];
    let after: number | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const p = await page(`limit=5${after === null ? '' : `&after=${after}`}`);
      seen.push(...p.feeds.map((f) => f.id_resource_feed));
      if (p.next === null) break;
      expect(p.next).toBe(p.feeds[4].id_resource_feed);
      after = p.next;
    }
    expect(seen).toEqual(ids);
    const first = (await page('limit=1')).feeds[0];
    expect(first).toEqual({ id_resource_feed: ids[0], created_at: '2025-06-01 12:01:40', raw_data: '0' });
  });

  it('keeps to the time range, both ends included, in either order', async () => {
    const range = 'from=2025-06-01 12:01:50&to=2025-06-01 12:02:10';
    expect((await page(range)).feeds.map((f) => f.raw_data)).toEqual(['1', '2', '3']);
    const newest = await page(`${range}&order=desc&limit=2`);
    expect(newest.feeds.map((f) => f.raw_data)).toEqual(['3', '2']);
    expect((await page(`${range}&order=desc&after=${newest.next}`)).feeds.map((f) => f.raw_data)).toEqual(['1']);
    // A cursor before the range's start starts at the range.
    expect((await page(`from=2025-06-01 12:03:20&after=${ids[0]}`)).feeds.map((f) => f.raw_data)).toEqual(['10', '11']);
    expect((await page('from=2030-01-01 00:00:00')).feeds).toEqual([]);
  });

  it('gives a time range of them as a CSV file to download, oldest first', async () => {
    const reply = await local('resources/74/feeds.csv?from=2025-06-01 12:01:50&to=2025-06-01 12:02:10');
    expect(reply.status, reply.text).toBe(200);
    expect(reply.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(reply.headers['content-disposition']).toBe('attachment; filename="resource-74-feeds.csv"');
    expect(reply.text).toBe(
      'id_resource_feed,created_at,raw_data\r\n' +
        `${ids[1]},2025-06-01 12:01:50,1\r\n${ids[2]},2025-06-01 12:02:00,2\r\n${ids[3]},2025-06-01 12:02:10,3\r\n`,
    );
    // All of them without a range.
    const all = (await local('resources/74/feeds.csv')).text.trim().split('\r\n');
    expect(all.slice(1).map((line) => Number(line.split(',')[0]))).toEqual(ids);
    expect((await local('resources/74/feeds.csv?from=now')).json.message).toMatch(/from must be a UTC time/);
    expect((await local('resources/99/feeds.csv')).status).toBe(404);
    expect((await local('resources/74/feeds.csv', 'POST')).headers.allow).toBe('GET');
  });

  it('quotes a CSV field that needs it, and keeps a spreadsheet from running a value as a formula', () => {
    expect(['21.5', '-3', '+4', 'a,b', 'say "hi"', 'two\nlines', '=HYPERLINK("x")', '@SUM(1)', '-', 'on'].map(csvField)).toEqual([
      '21.5', '-3', '+4', '"a,b"', '"say ""hi"""', '"two\nlines"', `"'=HYPERLINK(""x"")"`, "'@SUM(1)", "'-", 'on',
    ]);
  });

  it('refuses a bad query with 400 and a message that names it', async () => {
    const foreign = (await a.createFeed(73, 1)).json.payload.id_resource_feed;
    for (const [query, message] of [
      ['order=up', /order must be asc or desc/],
      ['limit=0', /limit "0" is not a positive integer/],
      ['limit=10001', /limit 10001 is over the most a page holds, 10000/],
      [`after=${foreign}`, new RegExp(`after ${foreign} is not a feed of resource 74`)],
      ['after=999999', /after 999999 is not a feed of resource 74/],
      ['from=2025-06-01T12:00:00Z', /from must be a UTC time as YYYY-MM-DD HH:MM:SS/],
      ['to=2025-13-45 99:00:00', /to must be a UTC time/],
      ['limit=5&limit=6', /limit is given more than once/],
    ] as const) {
      const reply = await local(`resources/74/feeds?${query}`);
      expect(reply.status, query).toBe(400);
      expect(reply.json).toMatchObject({ success: false, payload: null, message: expect.stringMatching(message) });
    }
    expect((await local('resources/99/feeds')).status).toBe(404);
    expect((await local('resources/x/feeds')).status).toBe(400);
    expect((await local('resources/74/feeds', 'DELETE')).headers.allow).toBe('GET, POST');
    expect((await local('nothing')).json.message).toBe('there is nothing at "/_local/nothing"');
  });
});

describe('the platform’s side changes nothing of the device’s', () => {
  it('reads change no counter and no presence', async () => {
    const before = await records();
    await local('resources/74/feeds?order=desc');
    await local('resources/73/feeds');
    now += 60_000;
    const after = await records();
    for (const [id, record] of before) {
      const { is_alive, is_dead, ...rest } = after.get(id)!;
      const { is_alive: _a, is_dead: _d, ...was } = record;
      expect(rest, `resource ${id}`).toEqual(was);
    }
  });

  it('a write is checked like operation 3, stored, and touches no counter and no presence', async () => {
    const before = (await records()).get(75)!;
    expect(before.lifetime_updated_at).toBeNull();
    now += 1000;
    const created = await local('resources/75/feeds', 'POST', { input: 'on' });
    expect(created.status, created.text).toBe(200);
    expect(created.json).toEqual({
      success: true,
      payload: { raw_data: 'on', id_resource: 75, created_at: expect.any(String), id_resource_feed: expect.any(Number) },
      message: 'Resource Feed Created!',
    });
    const after = (await records()).get(75)!;
    expect(after.last_feed).toEqual({ id_resource_feed: created.json.payload.id_resource_feed, id_resource: 75, raw_data: 'on', created_at: created.json.payload.created_at });
    expect(after.id_last_feed).toBe(created.json.payload.id_resource_feed);
    for (const field of ['api_requests_usage', 'api_network_usage', 'api_network_income_usage', 'api_network_outgoing_usage', 'lifetime_updated_at', 'is_alive']) {
      expect(after[field], field).toEqual(before[field]);
    }
    // The device reads it as its last feed, as a command.
    expect((await a.lastFeeds('75')).json.payload[0].raw_data).toBe('on');
  });

  it('a refused write answers as operation 3 does, and stores nothing', async () => {
    const last = (await records()).get(74)!.id_last_feed;
    const viaOperation3 = await a.createFeed(74, 300);
    const viaPage = await local('resources/74/feeds', 'POST', { input: 300 });
    expect(viaPage.status).toBe(422);
    expect(viaPage.json).toEqual(viaOperation3.json);
    expect(viaPage.json.message).toBe('resource 74: value 300 is outside [-40, 125]');
    expect((await local('resources/75/feeds', 'POST', { input: 'ON' })).json.message).toBe('resource 75: value "ON" does not match ^(?:on|off)$');
    expect((await local('resources/74/feeds', 'POST', [1])).status).toBe(400);
    expect((await local('resources/99/feeds', 'POST', { input: 1 })).status).toBe(404);
    // A form post from another site cannot send JSON without asking first (CORS): text/plain is refused.
    expect((await local('resources/74/feeds', 'POST', { input: 1 }, { 'Content-Type': 'text/plain' })).status).toBe(415);
    expect((await records()).get(74)!.id_last_feed).toBe(last);
  });
});

describe('beside the interface', () => {
  it('serves the page with a policy that lets it load only its own files', async () => {
    const page = await request(`${service.url}/`, 'GET');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    for (const asset of page.text.match(/\/_local\/assets\/[\w.]+/g)!) {
      expect((await request(service.url + asset, 'GET')).status, asset).toBe(200);
    }
  });

  it('leaves the interface as it was: its operations, and 404 for any other path', async () => {
    expect((await a.getResource(74, '?silent=true')).status).toBe(200);
    for (const path of ['/index.html', '/_local', '/api/device']) {
      const reply = await request(service.url + path, 'GET');
      expect(reply.status, path).toBe(404);
      expect(reply.json.message).toMatch(/there is no operation at/);
    }
  });

  it('is not served at all without the dashboard option', async () => {
    const plain = await startService({ seed: SEED });
    try {
      for (const path of ['/', '/_local/devices', '/_local/assets/app.js']) {
        const reply = await request(plain.url + path, 'GET');
        expect(reply.status, path).toBe(404);
        expect(reply.json.message).toMatch(/there is no operation at/);
      }
      expect(plain.dashboard).toBeUndefined();
    } finally {
      await plain.close();
    }
  });
});

describe('access', () => {
  it('without a password, answers only a loopback Host (a rebinding page’s host name is refused)', async () => {
    for (const host of ['localhost', `127.0.0.1:${service.port}`, '[::1]:80']) {
      expect((await local('devices', 'GET', undefined, { Host: host })).status, host).toBe(200);
    }
    for (const host of ['evil.example', `evil.example:${service.port}`, '10.0.0.1', '127.0.0.1.evil.example']) {
      const reply = await local('devices', 'GET', undefined, { Host: host });
      expect(reply.status, host).toBe(403);
      expect(reply.json.message).toMatch(/only to a loopback host name/);
    }
    // The interface keeps its own rules: no Host check.
    expect((await request(`${a.root}/resource/74`, 'GET', { headers: { Host: 'evil.example' } })).status).toBe(200);
  });

  it('without a password, refuses a connection that is not a loopback one, whatever its Host header', async () => {
    // The service listens beyond loopback (as with .listen(port, '0.0.0.0')) but was told nothing of it,
    // so it has no password. Its sockets report the addresses a client on the network would have; the
    // connection itself stays on loopback, the only address a test may reach.
    const exposed = createService({ seed: SEED, dashboard: {} });
    const seen: [string, string][] = [];
    let addresses: [remote: string, local: string] = ['192.168.1.20', '192.168.1.10'];
    exposed.server.prependListener('connection', (socket: Socket) => {
      Object.defineProperty(socket, 'remoteAddress', { value: addresses[0] });
      Object.defineProperty(socket, 'localAddress', { value: addresses[1] });
      seen.push(addresses);
    });
    await new Promise<void>((resolve) => exposed.server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(exposed.server.address() as AddressInfo).port}`;
    const localhost = { Host: 'localhost' };
    try {
      for (const remote of [['192.168.1.20', '192.168.1.10'], ['::ffff:10.0.0.7', '::ffff:10.0.0.1'], ['fe80::1', 'fe80::2'], ['127.0.0.1', '192.168.1.10']] as const) {
        addresses = [...remote];
        for (const path of ['/', '/_local/devices']) {
          const reply = await request(url + path, 'GET', { headers: localhost });
          expect(reply.status, `${remote} ${path}`).toBe(403);
          expect(reply.json.message).toMatch(/only connections from this machine/);
        }
        const write = await request(`${url}/_local/resources/74/feeds`, 'POST', { body: JSON.stringify({ input: 20 }), headers: localhost });
        expect(write.status, `${remote} write`).toBe(403);
      }
      expect(seen.length).toBe(12);
      // Loopback, IPv4 mapped into IPv6 included: as before, the Host header decides.
      for (const loopback of [['127.0.0.1', '127.0.0.1'], ['::ffff:127.0.0.1', '::ffff:127.0.0.1'], ['::1', '::1']] as const) {
        addresses = [...loopback];
        expect((await request(`${url}/_local/devices`, 'GET', { headers: localhost })).status, loopback[0]).toBe(200);
        expect((await request(`${url}/_local/devices`, 'GET', { headers: { Host: 'evil.example' } })).status, loopback[0]).toBe(403);
      }
      // None of the refused writes was stored.
      const state = (await request(`${url}/_local/devices`, 'GET', { headers: localhost })).json.payload;
      expect(state.devices[0].resources.find((r: any) => r.record.id_resource === 74).record.last_feed).toBeNull();
      // The interface keeps its own rules: a device on the network is answered.
      addresses = ['192.168.1.20', '192.168.1.10'];
      expect((await request(`${url}/api/device/${A.key}/resource/74`, 'GET')).status).toBe(200);
    } finally {
      await exposed.close();
    }
  });

  it('with a password, the page and its API need it (any user name); the interface keeps its bearer rules', async () => {
    const guarded = await startService({ seed: SEED, dashboard: { password: 'open sesame' } });
    try {
      expect(guarded.dashboard).toEqual({ url: guarded.url + '/', password: 'open sesame' });
      const basic = (user: string, password: string) => ({ Authorization: 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64') });
      for (const path of ['/', '/_local/devices', '/_local/assets/app.js']) {
        const refused = await request(guarded.url + path, 'GET');
        expect(refused.status, path).toBe(401);
        expect(refused.headers['www-authenticate']).toMatch(/^Basic realm=/);
        expect((await request(guarded.url + path, 'GET', { headers: basic('admin', 'wrong') })).status, path).toBe(401);
        expect((await request(guarded.url + path, 'GET', { token: A.token })).status, path).toBe(401);
        expect((await request(guarded.url + path, 'GET', { headers: basic('anyone', 'open sesame') })).status, path).toBe(200);
      }
      const api = device(guarded.url, A.key, A.token);
      expect((await api.createFeed(74, 20)).status).toBe(200);
      expect((await api.createFeed(74, 20, '', {})).status).toBe(401);
    } finally {
      await guarded.close();
    }
  });

  it('on a host beyond loopback, a password is made when none is given; an empty one is refused', async () => {
    const exposed = createService({ seed: SEED, host: '0.0.0.0', dashboard: {} });
    const loopback = createService({ seed: SEED, dashboard: {} });
    try {
      expect(exposed.dashboardPassword).toMatch(/^[\w-]{16}$/);
      expect(loopback.dashboardPassword).toBeNull();
    } finally {
      await Promise.all([exposed.close(), loopback.close()]);
    }
    expect(() => createService({ seed: SEED, dashboard: { password: '' } })).toThrow(/must not be empty/);
  });
});

describe('the feed pages’ index', () => {
  it('serves both orders from the index, seeking to the page, with no sort', () => {
    const dir = mkdtempSync(join(tmpdir(), 'feed-agent-local-api-'));
    try {
      const file = join(dir, 'feeds.db');
      new Store(file).close();
      const db = new Database(file);
      const bounds = { resource: 74, at: '2025-06-01 12:00:00', id: 5, from: '2025-06-01 00:00:00', to: '2025-06-02 00:00:00', since: 0, limit: 10 };
      for (const sql of Object.values(FEED_PAGE_SQL)) {
        const plan = (db.prepare('EXPLAIN QUERY PLAN ' + sql).all(bounds) as { detail: string }[]).map((row) => row.detail);
        expect(plan).toEqual(['SEARCH feeds USING INDEX feeds_by_resource_time (id_resource=? AND created_at>? AND created_at<?)']);
      }
      // A file made before the index existed gets it when a service opens it.
      db.exec('DROP INDEX feeds_by_resource_time');
      db.close();
      new Store(file).close();
      const reopened = new Database(file, { readonly: true });
      expect(reopened.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'feeds'").all()).toEqual([{ name: 'feeds_by_resource_time' }]);
      reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
