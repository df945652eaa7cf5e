// Presence (with a controllable clock) and the usage counters, exactly as docs/interface.md and docs/service.md state them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService } from '../../src/service';
import type { RunningService } from '../../src/service';
import { device } from '../support/client';
import { A, SEED } from './fixtures';

const START = Date.UTC(2025, 5, 1, 12, 0, 0);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
let now = START;
let service: RunningService;
let a: ReturnType<typeof device>;

beforeAll(async () => {
  service = await startService({ seed: SEED, now: () => now });
  a = device(service.url, A.key, A.token);
});
afterAll(() => service.close());

/** A read that touches nothing but the counters: no token. */
async function peek(id: number) {
  return (await a.getResource(id)).json.payload;
}

describe('presence', () => {
  it('is updated only with the device’s token and silent not true, and shows in the same response', async () => {
    const fresh = await peek(73);
    expect(fresh).toMatchObject({ lifetime_updated_at: null, is_alive: false, is_dead: true });
    for (const query of ['?silent=true', '?silent=1']) {
      expect((await a.getResource(73, query, { token: A.token })).json.payload.lifetime_updated_at).toBeNull();
    }
    expect((await a.getResource(73, '?silent=false')).json.payload.lifetime_updated_at).toBeNull();
    now = START + 1000;
    const touched = (await a.getResource(73, '?silent=0', { token: A.token })).json.payload;
    expect(touched).toMatchObject({ lifetime_updated_at: '2025-06-01 12:00:01', is_alive: true, is_dead: false });
  });

  it('is alive while within lifetime minutes of the update, computed at read', async () => {
    // Resource 73 has a lifetime of 15 minutes and was updated at START + 1 s.
    now = START + 1000 + 15 * MINUTE;
    expect(await peek(73)).toMatchObject({ is_alive: true, is_dead: false, lifetime_updated_at: '2025-06-01 12:00:01' });
    now += 1;
    expect(await peek(73)).toMatchObject({ is_alive: false, is_dead: true });
  });

  it('is updated on every resource an operation names or writes; silent writes still store their feeds', async () => {
    now = START + HOUR;
    await a.createFeed(74, 20, '?silent=true');
    expect(await peek(74)).toMatchObject({ lifetime_updated_at: null, last_feed: { raw_data: '20' } });
    await a.createFeed(74, 21);
    expect((await peek(74)).lifetime_updated_at).toBe('2025-06-01 13:00:00');

    now += MINUTE;
    await a.createFeeds([{ id_resource: 73, input: 1 }, { id_resource: 75, input: 'on' }]);
    expect((await peek(73)).lifetime_updated_at).toBe('2025-06-01 13:01:00');
    expect((await peek(75)).lifetime_updated_at).toBe('2025-06-01 13:01:00');
    expect((await peek(74)).lifetime_updated_at).toBe('2025-06-01 13:00:00');

    for (const [step, read] of [
      [2, () => a.getResources('74,73', '', { token: A.token })],
      [3, () => a.firstFeeds('74,73', '', { token: A.token })],
      [4, () => a.lastFeeds('74,73', '', { token: A.token })],
    ] as const) {
      now = START + HOUR + step * MINUTE;
      expect((await read()).status).toBe(200);
      const stamp = `2025-06-01 13:0${step}:00`;
      expect((await peek(74)).lifetime_updated_at).toBe(stamp);
      expect((await peek(73)).lifetime_updated_at).toBe(stamp);
      expect((await peek(75)).lifetime_updated_at).toBe('2025-06-01 13:01:00');
    }
  });
});

describe('usage counters', () => {
  it('count requests, request bytes (outgoing) and response bytes (income); the response’s own size shows next time', async () => {
    const start = (await a.getResource(74, '?silent=true')).json.payload;
    const expected = { requests: start.api_requests_usage, income: start.api_network_income_usage, outgoing: start.api_network_outgoing_usage };
    const bytes = (text: string) => Buffer.byteLength(text);

    // The read that gave `start` has counted itself, but its size is added only now.
    const first = await a.getResource(74);
    expected.requests += 1;
    expected.income += bytes(JSON.stringify({ success: true, payload: start, message: '' }));
    expect(first.json.payload).toMatchObject({
      api_requests_usage: expected.requests,
      api_network_income_usage: expected.income,
      api_network_outgoing_usage: expected.outgoing,
      api_network_usage: expected.income + expected.outgoing,
    });
    expected.income += bytes(first.text);

    // Operation 3: the whole request body out, the whole response in.
    const created = await a.createFeed(74, 22.5);
    expected.requests += 1;
    expected.outgoing += bytes(JSON.stringify({ input: 22.5 }));
    expected.income += bytes(created.text);

    // Operation 4: each element's JSON out and its payload entry in; one request however many elements.
    const elements = [
      { id_resource: 74, input: 1 },
      { id_resource: 73, input: 0 },
      { id_resource: 74, input: '-7.25' },
    ];
    const batch = await a.createFeeds(elements);
    expected.requests += 1;
    for (const i of [0, 2]) {
      expected.outgoing += bytes(JSON.stringify(elements[i]));
      expected.income += bytes(JSON.stringify(batch.json.payload[i]));
    }

    // Operations 2, 5, 6: each payload entry of the resource in, repeats included; one request each.
    for (const read of [() => a.getResources('74,73,74'), () => a.firstFeeds('74,75,74'), () => a.lastFeeds('73,74')]) {
      const reply = await read();
      expected.requests += 1;
      for (const entry of reply.json.payload) if (entry?.id_resource === 74) expected.income += bytes(JSON.stringify(entry));
    }

    const end = (await a.getResource(74)).json.payload;
    expect(end).toMatchObject({
      api_requests_usage: expected.requests + 1,
      api_network_income_usage: expected.income,
      api_network_outgoing_usage: expected.outgoing,
      api_network_usage: expected.income + expected.outgoing,
    });
  });

  it('operation 4 counts a string beyond ASCII in bytes, and answers it exactly as sent', async () => {
    // A free-text resource: its pattern takes any string, so inputs can hold every kind of character.
    const text = { ...SEED.subtypes[2], id_resource_subtype: 12, name: 'Texto', name_i18n: 'Text', data_restriction_regex: '[^]*' };
    const seed = { subtypes: [...SEED.subtypes, text], devices: [{ ...SEED.devices[0], resources: [{ id_resource: 76, id_resource_subtype: 12, name: 'Note', description: '', lifetime: 1 }] }] };
    const fresh = await startService({ seed });
    try {
      const other = device(fresh.url, A.key, A.token);
      const elements = [
        { id_resource: 76, input: 'é 中 😀' },
        { id_resource: 76, input: 'quote " backslash \\ newline \n' },
        { id_resource: 76, input: 'plain' },
      ];
      const before = (await other.getResource(76)).json.payload;
      const batch = await other.createFeeds(elements);
      expect(batch.json.payload.map((p: { raw_data: unknown }) => p.raw_data)).toEqual(elements.map((e) => e.input));
      const after = (await other.getResource(76)).json.payload;
      const beforeSize = Buffer.byteLength(JSON.stringify({ success: true, payload: before, message: '' }));
      const out = elements.reduce((sum, e) => sum + Buffer.byteLength(JSON.stringify(e)), 0);
      const income = batch.json.payload.reduce((sum: number, p: unknown) => sum + Buffer.byteLength(JSON.stringify(p)), 0);
      expect(after.api_network_outgoing_usage).toBe(out);
      expect(after.api_network_income_usage).toBe(beforeSize + income);
      expect(batch.text).toBe(JSON.stringify(batch.json));
    } finally {
      await fresh.close();
    }
  });

  it('a null entry of operations 5 and 6 counts as its four bytes', async () => {
    const fresh = await startService({ seed: SEED });
    try {
      const other = device(fresh.url, A.key, A.token);
      const initial = (await other.getResource(75)).json.payload;
      const reply = await other.firstFeeds('75');
      expect(reply.json.payload).toEqual([null]);
      const after = (await other.getResource(75)).json.payload;
      const firstSize = Buffer.byteLength(JSON.stringify({ success: true, payload: initial, message: '' }));
      expect(after.api_network_income_usage).toBe(firstSize + 4);
      expect(after.api_requests_usage).toBe(3);
    } finally {
      await fresh.close();
    }
  });
});
