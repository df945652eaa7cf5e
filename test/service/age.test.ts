// The sample's age (docs/interface.md, The sample's age), over real HTTP: operation 4's elements and
// operation 3's body may carry age_ms, and the feed's created_at is the arrival less it; ids keep the
// order of arrival whatever the ages, so operations 5 and 6 keep theirs; the dashboard's feed pages
// give the feeds in time order, and those stored since a feed whatever their time; and a bad age is 400
// naming the element, storing nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService } from '../../src/service';
import type { RunningService } from '../../src/service';
import type { FeedPage } from '../../src/service/local-wire';
import { MAX_AGE_MS } from '../../src/service/parse';
import { device, request } from '../support/client';
import type { Reply } from '../support/client';
import { A, SEED } from './fixtures';

// Half a second past a whole second, so that rounding down shows.
const START = Date.UTC(2025, 2, 3, 10, 0, 0) + 500;
let now = START;
let service: RunningService;
let a: ReturnType<typeof device>;

beforeAll(async () => {
  service = await startService({ seed: SEED, now: () => now, dashboard: {} });
  a = device(service.url, A.key, A.token);
});
afterAll(() => service.close());

const HOUR = 3_600_000;

function stamp(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

function payload(reply: Reply): any {
  expect(reply.status, reply.text).toBe(200);
  return reply.json.payload;
}

/** One page of the local API's feeds of a resource, as [id, created_at, raw_data] rows. */
async function localFeeds(resource: number, query: string): Promise<[number, string, string][]> {
  const page = payload(await request(`${service.url}/_local/resources/${resource}/feeds?${query}`, 'GET')) as FeedPage;
  return page.id_resource_feed.map((id, i) => [id, page.created_at[i], page.raw_data[i]]);
}

describe('a backlog delivered at once keeps its times', () => {
  it('stores each element at the arrival less its age, to the second below; ids in request order', async () => {
    now = START + 10 * HOUR;
    // An hour-long outage's backlog on 74 (one sample every 20 minutes), the door (73) once, then fresh ones.
    const ages = [3 * 20 * 60_000, 2 * 20 * 60_000, 20 * 60_000, 501, 500, 0];
    const body = [
      { id_resource: 74, input: 20.5, age_ms: ages[0] },
      { id_resource: 73, input: 1, age_ms: 45 * 60_000 },
      { id_resource: 74, input: 21, age_ms: ages[1] },
      { id_resource: 74, input: 21.5, age_ms: ages[2] },
      { id_resource: 74, input: 22, age_ms: ages[3] },
      { id_resource: 74, input: 22.5, age_ms: ages[4] },
      { id_resource: 74, input: 23, age_ms: ages[5] },
      { id_resource: 74, input: 23.5 },
    ];
    const created = payload(await a.createFeeds(body));
    const arrival = stamp(now);
    expect(arrival).toBe('2025-03-03 20:00:00');
    expect(created.map((f: any) => f.created_at)).toEqual([
      '2025-03-03 19:00:00',
      '2025-03-03 19:15:00',
      '2025-03-03 19:20:00',
      '2025-03-03 19:40:00',
      // 501 ms before x.500 is the second before; 500 ms is x.000, the same second as the arrival.
      '2025-03-03 19:59:59',
      arrival,
      arrival,
      arrival,
    ]);
    // The answer is the interface's created feed, in request order, ids one after another.
    expect(Object.keys(created[0])).toEqual(['raw_data', 'id_resource', 'created_at', 'id_resource_feed']);
    const ids = created.map((f: any) => f.id_resource_feed);
    expect(ids).toEqual(ids.map((_: number, i: number) => ids[0] + i));

    // Operations 5 and 6 give the first and the last stored, and show the times stored.
    const [first74, first73] = payload(await a.firstFeeds('74,73'));
    expect(first74).toEqual({ id_resource_feed: ids[0], id_resource: 74, raw_data: '20.5', created_at: '2025-03-03 19:00:00' });
    expect(first73).toEqual({ id_resource_feed: ids[1], id_resource: 73, raw_data: '1', created_at: '2025-03-03 19:15:00' });
    const [last74] = payload(await a.lastFeeds('74'));
    expect(last74).toEqual({ id_resource_feed: ids[7], id_resource: 74, raw_data: '23.5', created_at: arrival });
    // The resource was updated when the request came, whatever the samples' times.
    const record = payload(await a.getResource(74));
    expect(record.updated_at).toBe(arrival);
    expect(record.last_feed).toEqual(last74);

    // The dashboard's pages: in time order, where they were sampled.
    expect(await localFeeds(74, 'from=2025-03-03 19:10:00&to=2025-03-03 19:59:59')).toEqual([
      [ids[2], '2025-03-03 19:20:00', '21'],
      [ids[3], '2025-03-03 19:40:00', '21.5'],
      [ids[4], '2025-03-03 19:59:59', '22'],
    ]);
  });

  it('stores every element of a large batch at its own time, whether or not its neighbours share it', async () => {
    now = START + 15 * HOUR;
    // 1,000 samples, 10 ms apart for the first 600 (runs sharing a second), then 7 s apart, some without age.
    const ages = Array.from({ length: 1000 }, (_, i) => (i < 600 ? 6_000 + 4_200_000 - i * 10 : i % 5 === 0 ? undefined : (1000 - i) * 7_000));
    const body = ages.map((age, i) => ({ id_resource: 74, input: i % 100, ...(age !== undefined && { age_ms: age }) }));
    const created = payload(await a.createFeeds(body));
    const expected = ages.map((age) => stamp(now - (age ?? 0)));
    expect(created.map((f: any) => f.created_at)).toEqual(expected);
    // Read back by id, as stored.
    const first = created[0].id_resource_feed;
    const stored = new Map((await localFeeds(74, `since=${first - 1}&limit=1000`)).map(([id, at, raw]) => [id, [at, raw]]));
    expect(created.map((f: any) => stored.get(f.id_resource_feed))).toEqual(expected.map((at, i) => [at, String(i % 100)]));
  });

  it('ages out of order for a resource are stored as given: ids keep arrival order, and so do operations 5 and 6', async () => {
    now = START + 20 * HOUR;
    const created = payload(
      await a.createFeeds([
        { id_resource: 75, input: 'on', age_ms: 60_000 },
        // Sampled before the element sent ahead of it: a device that did not keep its sampling order.
        { id_resource: 75, input: 'off', age_ms: 120_000 },
      ]),
    );
    const [on, off] = created.map((f: any) => f.id_resource_feed);
    expect(off).toBe(on + 1);
    expect(created.map((f: any) => f.created_at)).toEqual(['2025-03-04 05:59:00', '2025-03-04 05:58:00']);
    // The last feed is the last stored (rule 2 of the interface): "off", though its time is the earlier.
    expect(payload(await a.lastFeeds('75'))[0]).toMatchObject({ id_resource_feed: off, raw_data: 'off', created_at: '2025-03-04 05:58:00' });
    expect(payload(await a.firstFeeds('75'))[0]).toMatchObject({ id_resource_feed: on, raw_data: 'on' });
    // In time order, "off" comes first.
    expect(await localFeeds(75, '')).toEqual([
      [off, '2025-03-04 05:58:00', 'off'],
      [on, '2025-03-04 05:59:00', 'on'],
    ]);
  });

  it('operation 3 takes age_ms too', async () => {
    now = START + 30 * HOUR;
    const reply = await request(`${a.root}/resource/74/feeds`, 'POST', { token: A.token, body: JSON.stringify({ input: 19, age_ms: 90_000 }) });
    expect(reply.json.message).toBe('Resource Feed Created!');
    const feed = payload(reply);
    expect(feed).toMatchObject({ raw_data: 19, id_resource: 74, created_at: '2025-03-04 15:58:30' });
    expect(payload(await a.lastFeeds('74'))[0]).toMatchObject({ id_resource_feed: feed.id_resource_feed, created_at: '2025-03-04 15:58:30' });
  });

  it('without age_ms nothing changes, and an age of 0 is the same', async () => {
    now = START + 40 * HOUR;
    const created = payload(await a.createFeeds([{ id_resource: 74, input: 1 }, { id_resource: 74, input: 2, age_ms: 0 }]));
    expect(created.map((f: any) => f.created_at)).toEqual([stamp(now), stamp(now)]);
    expect(payload(await a.createFeed(74, 3)).created_at).toBe(stamp(now));
  });

  it('counts age_ms in an element’s outgoing bytes, as part of the element read', async () => {
    now = START + 50 * HOUR;
    const before = payload(await a.getResource(73, '?silent=true')).api_network_outgoing_usage;
    payload(await a.createFeeds([{ id_resource: 73, input: 0, age_ms: 1234 }]));
    const after = payload(await a.getResource(73, '?silent=true')).api_network_outgoing_usage;
    expect(after - before).toBe('{"id_resource":73,"input":0,"age_ms":1234}'.length);
  });
});

describe('the dashboard reads what arrived since, whatever its time', () => {
  it('since=ID gives the feeds stored after that id, in time order, within the range', async () => {
    now = START + 60 * HOUR;
    const [live] = payload(await a.createFeeds([{ id_resource: 74, input: 30 }])).map((f: any) => f.id_resource_feed);
    now += 2_000;
    // A backlog that arrives after the live feed, sampled before it.
    const backlog = payload(
      await a.createFeeds([
        { id_resource: 74, input: 28, age_ms: 30 * 60_000 },
        { id_resource: 73, input: 1, age_ms: 20 * 60_000 },
        { id_resource: 74, input: 29, age_ms: 10 * 60_000 },
        { id_resource: 74, input: 31, age_ms: 1000 },
      ]),
    ).map((f: any) => f.id_resource_feed);
    // After the live feed in time order, the backlog is not there: only its last sample.
    expect((await localFeeds(74, `after=${live}`)).map((row) => row[2])).toEqual(['31']);
    // Stored since it, in time order, it is.
    const since = await localFeeds(74, `since=${live}`);
    expect(since).toEqual([
      [backlog[0], '2025-03-05 21:30:02', '28'],
      [backlog[2], '2025-03-05 21:50:02', '29'],
      [backlog[3], '2025-03-05 22:00:01', '31'],
    ]);
    // With a range, a limit and a cursor, as a chart that holds part of the window pages through it.
    const first = await localFeeds(74, `since=${live}&from=2025-03-05 21:40:00&limit=1`);
    expect(first.map((row) => row[2])).toEqual(['29']);
    expect((await localFeeds(74, `since=${live}&from=2025-03-05 21:40:00&after=${first[0][0]}`)).map((row) => row[2])).toEqual(['31']);
    expect(await localFeeds(74, `since=${backlog[3]}`)).toEqual([]);
    const bad = await request(`${service.url}/_local/resources/74/feeds?since=-1`, 'GET');
    expect(bad.status).toBe(400);
    expect(bad.json.message).toBe('since "-1" is not a positive integer');
  });
});

describe('a bad age is refused, naming the element, and nothing is stored', () => {
  it('refuses an age that is negative, not an integer, or over 30 days', async () => {
    now = START + 70 * HOUR;
    const lastBefore = payload(await a.lastFeeds('73,74'));
    const usageBefore = payload(await a.getResources('73,74', '?silent=true')).map((r: any) => r.api_requests_usage);
    const good = { id_resource: 73, input: 1, age_ms: 5 };
    for (const [age, message] of [
      [-1, 'element 1: age_ms -1 is negative; it is how long before sending the value was sampled'],
      [1.5, 'element 1: age_ms must be an integer number of milliseconds, not 1.5'],
      ['100', 'element 1: age_ms must be an integer number of milliseconds, not "100"'],
      [null, 'element 1: age_ms must be an integer number of milliseconds, not null'],
      [[1], 'element 1: age_ms must be an integer number of milliseconds, not [1]'],
      [MAX_AGE_MS + 1, 'element 1: age_ms 2592000001 is over the limit of 2592000000 (30 days)'],
      [1e300, 'element 1: age_ms 1e+300 is over the limit of 2592000000 (30 days)'],
    ] as const) {
      const reply = await a.createFeeds([good, { id_resource: 74, input: 20, age_ms: age }, good]);
      expect(reply.status, JSON.stringify(age)).toBe(400);
      expect(reply.json).toEqual({ success: false, payload: null, message });
    }
    // Operation 3 names no element.
    const single = await request(`${a.root}/resource/74/feeds`, 'POST', { token: A.token, body: JSON.stringify({ input: 20, age_ms: -5 }) });
    expect(single.status).toBe(400);
    expect(single.json.message).toBe('age_ms -5 is negative; it is how long before sending the value was sampled');
    // The checks of an element run in order: its shape (the age among it) before its resource.
    expect((await a.createFeeds([{ id_resource: 99, input: 1, age_ms: -1 }])).json.message).toBe(
      'element 0: age_ms -1 is negative; it is how long before sending the value was sampled',
    );
    const usageAfter = payload(await a.getResources('73,74', '?silent=true')).map((r: any) => r.api_requests_usage);
    // Only the reads count: this one.
    expect(usageAfter).toEqual(usageBefore.map((n: number) => n + 1));
    expect(payload(await a.lastFeeds('73,74'))).toEqual(lastBefore);
  });

  it('takes an age of exactly 30 days', async () => {
    now = START + 80 * HOUR;
    const [feed] = payload(await a.createFeeds([{ id_resource: 74, input: 20, age_ms: MAX_AGE_MS }]));
    expect(feed.created_at).toBe(stamp(now - 30 * 24 * HOUR));
  });
});
