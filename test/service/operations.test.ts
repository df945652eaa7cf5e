// The six operations over real HTTP: record shapes and field order, messages, headers, payload order,
// repeated ids, null positions, and rules 2 and 3 of the interface.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService } from '../../src/service';
import type { RunningService } from '../../src/service';
import { device } from '../support/client';
import type { Reply } from '../support/client';
import { A, SEED } from './fixtures';

const START = Date.UTC(2024, 0, 2, 3, 4, 5);
let now = START;
let service: RunningService;
let api: ReturnType<typeof device>;

beforeAll(async () => {
  service = await startService({ seed: SEED, now: () => now });
  api = device(service.url, A.key, A.token);
});
afterAll(() => service.close());

const RESOURCE_KEYS = [
  'id_resource',
  'id_device',
  'id_resource_subtype',
  'id_last_feed',
  'name',
  'description',
  'lifetime',
  'api_requests_usage',
  'api_network_usage',
  'api_network_income_usage',
  'api_network_outgoing_usage',
  'lifetime_updated_at',
  'created_at',
  'updated_at',
  'active',
  'is_alive',
  'is_dead',
  'subtype',
  'last_feed',
  'data_format',
];
const SUBTYPE_KEYS = [
  'id_resource_subtype',
  'id_resource_type',
  'name',
  'name_i18n',
  'description',
  'data_format_operation',
  'data_restriction_regex',
  'data_restriction_begin_range',
  'data_restriction_end_range',
  'created_at',
  'updated_at',
];
const INTEGER_KEYS = [
  'id_resource',
  'id_device',
  'id_resource_subtype',
  'lifetime',
  'active',
  'api_requests_usage',
  'api_network_usage',
  'api_network_income_usage',
  'api_network_outgoing_usage',
];
const FEED_KEYS = ['id_resource_feed', 'id_resource', 'raw_data', 'created_at'];
const CREATED_KEYS = ['raw_data', 'id_resource', 'created_at', 'id_resource_feed'];
const STAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

function ok(reply: Reply, message = ''): unknown {
  expect(reply.status).toBe(200);
  expect(Object.keys(reply.json)).toEqual(['success', 'payload', 'message']);
  expect(reply.json.success).toBe(true);
  expect(reply.json.message).toBe(message);
  return reply.json.payload;
}

function expectResourceShape(r: Record<string, unknown>): void {
  expect(Object.keys(r)).toEqual(RESOURCE_KEYS);
  for (const key of INTEGER_KEYS) expect(Number.isInteger(r[key]), key).toBe(true);
  expect(r.api_network_usage).toBe((r.api_network_income_usage as number) + (r.api_network_outgoing_usage as number));
  expect(typeof r.name).toBe('string');
  expect(typeof r.description).toBe('string');
  expect(r.created_at).toMatch(STAMP);
  expect(r.updated_at).toMatch(STAMP);
  expect(typeof r.is_alive).toBe('boolean');
  expect(r.is_dead).toBe(!r.is_alive);
  expect(r.active).toBe(1);
  expect(r.data_format).toEqual([]);
  expect(Object.keys(r.subtype as object)).toEqual(SUBTYPE_KEYS);
  if (r.last_feed === null) expect(r.id_last_feed).toBeNull();
  else {
    expect(Object.keys(r.last_feed as object)).toEqual(FEED_KEYS);
    expect((r.last_feed as { id_resource_feed: number }).id_resource_feed).toBe(r.id_last_feed);
  }
}

describe('operation 1: Get Resource', () => {
  it('answers the full record with its subtype, the interface headers and an exact Content-Length', async () => {
    const reply = await api.getResource(73, '?silent=true');
    const r = ok(reply) as Record<string, unknown>;
    expectResourceShape(r);
    expect(reply.headers['content-type']).toBe('application/json');
    expect(reply.headers['content-language']).toBe('en');
    // "Binário" makes bytes and characters differ.
    expect(Number(reply.headers['content-length'])).toBe(Buffer.byteLength(reply.text));
    expect(r).toMatchObject({
      id_resource: 73,
      id_resource_subtype: 3,
      id_last_feed: null,
      name: 'Input Binary Resource',
      description: '',
      lifetime: 15,
      lifetime_updated_at: null,
      created_at: '2024-01-02 03:04:05',
      last_feed: null,
      subtype: { ...SEED.subtypes[0], created_at: '2024-01-02 03:04:05', updated_at: '2024-01-02 03:04:05' },
    });
  });
});

describe('operations 3 and 4: feed creation', () => {
  it('operation 3 answers the created feed in the order of docs/interface.md §2.4 with raw_data exactly as sent', async () => {
    now = START + 60_000;
    for (const [id, input] of [
      [74, 21.5],
      [73, true],
      [73, '1'],
      [75, 'on'],
    ] as const) {
      const feed = ok(await api.createFeed(id, input), 'Resource Feed Created!') as Record<string, unknown>;
      expect(Object.keys(feed)).toEqual(CREATED_KEYS);
      expect(feed).toMatchObject({ raw_data: input, id_resource: id, created_at: '2024-01-02 03:05:05' });
      expect(Number.isInteger(feed.id_resource_feed)).toBe(true);
    }
  });

  it('rule 2 and 3: the new feed becomes the last feed, with a greater id than every earlier one', async () => {
    const before = ok(await api.getResource(74)) as { id_last_feed: number };
    const created = ok(await api.createFeed(74, -12), 'Resource Feed Created!') as { id_resource_feed: number };
    expect(created.id_resource_feed).toBeGreaterThan(before.id_last_feed);
    const after = ok(await api.getResource(74)) as Record<string, unknown>;
    expectResourceShape(after);
    expect(after.id_last_feed).toBe(created.id_resource_feed);
    expect(after.last_feed).toEqual({ id_resource_feed: created.id_resource_feed, id_resource: 74, raw_data: '-12', created_at: '2024-01-02 03:05:05' });
  });

  it('operation 4 answers one created feed per element, in request order; a repeated id makes separate, increasing feeds', async () => {
    const elements = [
      { id_resource: 73, input: 0 },
      { id_resource: 74, input: '3.25' },
      { id_resource: 73, input: false },
      { id_resource: 73, input: 1 },
    ];
    const payload = ok(await api.createFeeds(elements)) as Record<string, unknown>[];
    expect(payload).toHaveLength(4);
    payload.forEach((feed, i) => {
      expect(Object.keys(feed)).toEqual(CREATED_KEYS);
      expect(feed).toMatchObject({ raw_data: elements[i].input, id_resource: elements[i].id_resource, created_at: '2024-01-02 03:05:05' });
    });
    const ids = payload.map((f) => f.id_resource_feed as number);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(new Set(ids).size).toBe(4);
    const last = ok(await api.lastFeeds('73,74')) as { id_resource_feed: number; raw_data: string }[];
    expect(last.map((f) => f.id_resource_feed)).toEqual([ids[3], ids[1]]);
    expect(last.map((f) => f.raw_data)).toEqual(['1', '3.25']);
  });

  it('stores raw_data as a string in reads: String(n) for numbers, "1"/"0" for booleans, strings as sent', async () => {
    for (const [input, stored] of [
      [1e-7, '1e-7'],
      [0.1, '0.1'],
      [true, '1'],
      [false, '0'],
      ['0.50', '0.50'],
      [1.0, '1'],
    ] as const) {
      const created = ok(await api.createFeed(73, input), 'Resource Feed Created!') as { raw_data: unknown };
      expect(created.raw_data).toBe(input);
      const [last] = ok(await api.lastFeeds('73')) as { raw_data: string }[];
      expect(last.raw_data).toBe(stored);
    }
  });
});

describe('operations 2, 5 and 6: id lists', () => {
  it('operation 2 answers the records in path order, repeats included', async () => {
    const records = ok(await api.getResources('75,73,74,73')) as Record<string, unknown>[];
    records.forEach(expectResourceShape);
    expect(records.map((r) => r.id_resource)).toEqual([75, 73, 74, 73]);
    expect(records[3]).toEqual(records[1]);
  });

  it('operations 5 and 6 answer the first and last feed per id, in path order, with null where a resource has none', async () => {
    const fresh = await startService({ seed: SEED });
    try {
      const other = device(fresh.url, A.key, A.token);
      const first = ok(await other.createFeed(74, 10), 'Resource Feed Created!') as { id_resource_feed: number };
      const middle = ok(await other.createFeed(73, 1), 'Resource Feed Created!') as { id_resource_feed: number };
      const last = ok(await other.createFeed(74, 11), 'Resource Feed Created!') as { id_resource_feed: number };
      const firsts = ok(await other.firstFeeds('74,75,73,74')) as ({ id_resource_feed: number } | null)[];
      const lasts = ok(await other.lastFeeds('74,75,73,74')) as ({ id_resource_feed: number } | null)[];
      for (const feed of [...firsts, ...lasts]) if (feed !== null) expect(Object.keys(feed)).toEqual(FEED_KEYS);
      expect(firsts.map((f) => f?.id_resource_feed ?? null)).toEqual([first.id_resource_feed, null, middle.id_resource_feed, first.id_resource_feed]);
      expect(lasts.map((f) => f?.id_resource_feed ?? null)).toEqual([last.id_resource_feed, null, middle.id_resource_feed, last.id_resource_feed]);
      expect(firsts[0]).toMatchObject({ id_resource: 74, raw_data: '10' });
      const resource = ok(await other.getResource(75)) as Record<string, unknown>;
      expect(resource.id_last_feed).toBeNull();
      expect(resource.last_feed).toBeNull();
    } finally {
      await fresh.close();
    }
  });
});

describe('large batches', () => {
  it('stores every element of a batch under the id its answer gave it, in request order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'service-batch-'));
    const dbFile = join(dir, 'batch.db');
    try {
      const stored = await startService({ seed: SEED, dbFile });
      const api = device(stored.url, A.key, A.token);
      const answered: { id_resource_feed: number; id_resource: number; raw_data: number }[] = [];
      // 85 = 64 + 16 + 4 + 1 and 1000 elements: every size of insert group, then the largest batch allowed.
      for (const size of [85, 1000]) {
        const elements = Array.from({ length: size }, (_, i) => ({ id_resource: i % 3 === 0 ? 73 : 74, input: i % 3 === 0 ? i % 2 : (i % 160) - 40 }));
        const payload = ok(await api.createFeeds(elements)) as typeof answered;
        expect(payload.map((f) => [f.id_resource, f.raw_data])).toEqual(elements.map((e) => [e.id_resource, e.input]));
        answered.push(...payload);
      }
      await stored.close();
      const file = new Database(dbFile, { readonly: true });
      const rows = file.prepare('SELECT id_resource_feed, id_resource, raw_data FROM feeds ORDER BY id_resource_feed').all();
      file.close();
      expect(rows).toEqual(answered.map((f) => ({ id_resource_feed: f.id_resource_feed, id_resource: f.id_resource, raw_data: String(f.raw_data) })));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
