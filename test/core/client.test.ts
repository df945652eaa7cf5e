// Unit test of the client's URL building and answer parsing, against a scripted `request` function.
import { describe, expect, it } from 'vitest';
import { FeedClient } from '../../src/core/wire/client';
import type { BatchAnswer } from '../../src/core/wire/answers';
import type { ClientOptions } from '../../src/core/wire/client';
import { FeedError, isAuthError, redact } from '../../src/core/wire/errors';
import { parseHttpDate, parseRetryAfter } from '../../src/core/wire/retry-after';
import { sameOriginTarget } from '../../src/core/wire/redirect';
import type { HttpRequest, HttpResult } from '../../src/core/host/host';
import { PUBLIC_KEY, TOKEN, binarySubtype, feed, resource73, resourceWithoutFeeds } from './fixtures/records';

const BASE = 'http://svc.test:8080';
const DEVICE = '/api/device/' + PUBLIC_KEY;

/** A client whose requests are recorded and answered, in order, from `answers`. */
function setup(answers: HttpResult[], options: Partial<ClientOptions> = {}) {
  const requests: HttpRequest[] = [];
  const request = async (req: HttpRequest): Promise<HttpResult> => {
    requests.push(req);
    const answer = answers.shift();
    if (answer === undefined) throw new Error('test: no answer scripted for ' + req.url);
    return answer;
  };
  const client = new FeedClient(request, { baseUrl: BASE, publicKey: PUBLIC_KEY, token: TOKEN, timeoutMs: 10_000, ...options });
  return { client, requests };
}

/** A {success, failed} answer, read: its rejected elements and how many it stored. */
function split(batch: BatchAnswer) {
  expect(batch.partial).toBe(true);
  return { rejected: batch.rejected, stored: batch.feeds.length };
}

function answer(status: number, body: unknown, retryAfter: string | null = null): HttpResult {
  return { kind: 'response', status, retryAfter, body: typeof body === 'string' ? body : JSON.stringify(body) };
}

function ok(payload: unknown, message = ''): HttpResult {
  return answer(200, { success: true, payload, message });
}

function failure(status: number, message: string, retryAfter: string | null = null): HttpResult {
  return answer(status, { success: false, payload: null, message }, retryAfter);
}

async function rejection(promise: Promise<unknown>): Promise<FeedError> {
  const e = await promise.then(
    () => { throw new Error('test: expected a rejection'); },
    (error: unknown) => error,
  );
  expect(e).toBeInstanceOf(FeedError);
  return e as FeedError;
}

const created = (id_resource: number, raw_data: number | boolean | string, id_resource_feed: number) =>
  ({ raw_data, id_resource, created_at: '2018-01-02 17:46:57', id_resource_feed });

describe('URLs', () => {
  it('builds each operation\'s path under the base URL and the escaped public key', async () => {
    const { client, requests } = setup([
      ok(resource73()),
      ok([resource73(), resourceWithoutFeeds()]),
      ok(created(73, 1, 1), 'Resource Feed Created!'),
      ok([created(73, 1, 2), created(74, 0, 3)]),
      ok([feed(73, 1, '1'), null]),
      ok([feed(73, 3, '1'), null]),
    ]);
    await client.getResource(73);
    await client.getResources([73, 74]);
    await client.createFeed(73, 1);
    await client.createFeeds([{ id_resource: 73, input: 1 }, { id_resource: 74, input: false }]);
    await client.firstFeeds([73, 74]);
    await client.lastFeeds([73, 74]);
    expect(requests.map((r) => r.method + ' ' + r.url)).toEqual([
      `GET ${BASE}${DEVICE}/resource/73`,
      `GET ${BASE}${DEVICE}/resources/73,74`,
      `POST ${BASE}${DEVICE}/resource/73/feeds`,
      `POST ${BASE}${DEVICE}/resources/feeds`,
      `GET ${BASE}${DEVICE}/resources/73,74/feeds/first`,
      `GET ${BASE}${DEVICE}/resources/73,74/feeds/last`,
    ]);
    expect(requests.map((r) => r.timeoutMs)).toEqual([10_000, 10_000, 10_000, 10_000, 10_000, 10_000]);
    expect(requests.map((r) => r.body)).toEqual([
      undefined,
      undefined,
      '{"input":1}',
      '[{"id_resource":73,"input":1},{"id_resource":74,"input":false}]',
      undefined,
      undefined,
    ]);
  });

  it('escapes a key with odd characters and drops trailing slashes of the base URL', async () => {
    const { client, requests } = setup([ok(resource73())], { baseUrl: BASE + '//', publicKey: 'a/b c?d#e&f=é' });
    await client.getResource(73);
    expect(requests[0].url).toBe(`${BASE}/api/device/a%2Fb%20c%3Fd%23e%26f%3D%C3%A9/resource/73`);
  });

  it('adds ?silent=true only when silent', async () => {
    const { client, requests } = setup([ok(resource73()), ok(resource73()), ok(created(73, 1, 1)), ok([feed(73, 1, '1')])]);
    await client.getResource(73, { silent: true });
    await client.getResource(73, { silent: false });
    await client.createFeed(73, 1, { silent: true });
    await client.lastFeeds([73], { silent: true });
    expect(requests.map((r) => r.url.slice(BASE.length + DEVICE.length))).toEqual([
      '/resource/73?silent=true',
      '/resource/73',
      '/resource/73/feeds?silent=true',
      '/resources/73/feeds/last?silent=true',
    ]);
  });

  it('splits more than 100 ids into several requests and joins the answers in order', async () => {
    const ids = Array.from({ length: 250 }, (_, i) => 1000 + i);
    const page = (from: number, to: number) => ok(ids.slice(from, to).map((id) => feed(id, id * 10, String(id))));
    const { client, requests } = setup([page(0, 100), page(100, 200), page(200, 250)]);
    const feeds = await client.lastFeeds(ids);
    expect(requests.map((r) => r.url)).toEqual([
      `${BASE}${DEVICE}/resources/${ids.slice(0, 100).join(',')}/feeds/last`,
      `${BASE}${DEVICE}/resources/${ids.slice(100, 200).join(',')}/feeds/last`,
      `${BASE}${DEVICE}/resources/${ids.slice(200).join(',')}/feeds/last`,
    ]);
    expect(feeds.map((f) => f?.id_resource)).toEqual(ids);
  });

  it('keeps repeated ids, and sends nothing for an empty list', async () => {
    const { client, requests } = setup([ok([resource73(), resource73()])]);
    expect((await client.getResources([73, 73])).length).toBe(2);
    expect(await client.getResources([])).toEqual([]);
    expect(await client.createFeeds([])).toEqual({ rejected: [], feeds: [], partial: false });
    expect(requests.length).toBe(1);
  });

  it('rejects a bad id with a RangeError or TypeError naming it, before sending', async () => {
    const { client, requests } = setup([]);
    await expect(client.getResource(0)).rejects.toThrow(RangeError);
    await expect(client.getResource(1.5)).rejects.toThrow(/1\.5/);
    await expect(client.getResources([73, -4])).rejects.toThrow(/ids\[1\] -4 is not a positive safe integer/);
    await expect(client.firstFeeds([2 ** 53])).rejects.toThrow(RangeError);
    await expect(client.lastFeeds([Number.NaN])).rejects.toThrow(RangeError);
    await expect(client.getResources(['73' as unknown as number])).rejects.toThrow(TypeError);
    await expect(client.createFeeds([{ id_resource: 73, input: 1 }, { id_resource: 0, input: 1 }]))
      .rejects.toThrow(/elements\[1\]\.id_resource 0/);
    await expect(client.createFeed(73, Number.POSITIVE_INFINITY)).rejects.toThrow(TypeError);
    await expect(client.createFeed(73, null as unknown as number)).rejects.toThrow(/input must be/);
    await expect(client.createFeedsEncoded('[]', -1, () => 73)).rejects.toThrow(RangeError);
    expect(requests.length).toBe(0);
  });
});

describe('headers', () => {
  it('sends the bearer token by default, and not with auth: false', async () => {
    const { client, requests } = setup([ok(resource73()), ok(resource73())]);
    await client.getResource(73);
    await client.getResource(73, { auth: false });
    expect(requests[0].headers).toEqual({ Accept: 'application/json', Authorization: 'Bearer ' + TOKEN });
    expect(requests[1].headers).toEqual({ Accept: 'application/json' });
  });

  it('sends JSON content type and the token on writes', async () => {
    const { client, requests } = setup([ok(created(73, 1, 1)), ok([created(73, 1, 2)]), ok([created(73, 0, 3)])]);
    await client.createFeed(73, 1);
    await client.createFeeds([{ id_resource: 73, input: 1 }]);
    await client.createFeedsEncoded('[{"id_resource":73,"input":0}]', 1, () => 73);
    for (const r of requests) {
      expect(r.headers).toEqual({
        Accept: 'application/json',
        Authorization: 'Bearer ' + TOKEN,
        'Content-Type': 'application/json',
      });
    }
    expect(requests[2].body).toBe('[{"id_resource":73,"input":0}]');
  });

  it('reads without a token, and refuses a write or auth: true without one before sending', async () => {
    const { client, requests } = setup([ok(resource73())], { token: undefined });
    await client.getResource(73);
    expect(requests[0].headers).toEqual({ Accept: 'application/json' });
    for (const call of [
      client.createFeed(73, 1),
      client.createFeeds([{ id_resource: 73, input: 1 }]),
      client.createFeedsEncoded('[]', 0, () => 73),
      client.getResource(73, { auth: true }),
    ]) {
      const e = await call.then(() => null, (error: unknown) => error);
      expect(e).toBeInstanceOf(Error);
      expect(e).not.toBeInstanceOf(FeedError);
      expect(String(e)).toMatch(/token/);
    }
    expect(requests.length).toBe(1);
  });

  it('refuses auth: false on a write', async () => {
    const { client, requests } = setup([]);
    await expect(client.createFeed(73, 1, { auth: false })).rejects.toThrow(/Authorization/);
    expect(requests.length).toBe(0);
  });
});

describe('parsing', () => {
  it('returns resources exactly as the interface describes them, with or without feeds', async () => {
    const { client } = setup([ok(resource73()), ok([resourceWithoutFeeds(74), resource73()])]);
    expect(await client.getResource(73)).toEqual(resource73());
    expect(await client.getResources([74, 73])).toEqual([resourceWithoutFeeds(74), resource73()]);
  });

  it('tolerates fields the interface does not list', async () => {
    const extra = { ...resource73(), color: 'blue', subtype: { ...binarySubtype(), unit: 'bit' } };
    const { client } = setup([ok(extra)]);
    expect((await client.getResource(73)).subtype.name_i18n).toBe('Binary');
  });

  it('returns first and last feeds with null where a resource has none', async () => {
    const { client } = setup([ok([feed(73, 510600, '0'), null]), ok([null, feed(73, 510649, '1')])]);
    expect(await client.firstFeeds([73, 74])).toEqual([feed(73, 510600, '0'), null]);
    expect(await client.lastFeeds([74, 73])).toEqual([null, feed(73, 510649, '1')]);
  });

  it('returns the created feed with raw_data as sent', async () => {
    const { client } = setup([ok(created(73, 1, 510651), 'Resource Feed Created!'), ok(created(73, 'on', 510652))]);
    expect(await client.createFeed(73, 1)).toEqual(created(73, 1, 510651));
    expect((await client.createFeed(73, 'on')).raw_data).toBe('on');
  });

  it('accepts the plain array form of operation 4', async () => {
    const { client } = setup([ok([created(73, 1, 510649), created(74, 65, 510650)])]);
    const outcome = await client.createFeeds([{ id_resource: 73, input: 1 }, { id_resource: 74, input: 65 }]);
    expect(outcome).toEqual({ rejected: [], feeds: [created(73, 1, 510649), created(74, 65, 510650)], partial: false });
  });

  it('maps the {success, failed} form\'s failed entries to request indices', async () => {
    const { client } = setup([ok({
      success: [created(73, 1, 510649), created(73, 0, 510650)],
      failed: [{ id_resource: 74, input: 5, message: 'value 5 is outside [0, 1]' }],
    })]);
    const outcome = await client.createFeeds([
      { id_resource: 73, input: 1 },
      { id_resource: 74, input: 5 },
      { id_resource: 73, input: 0 },
    ]);
    expect(split(outcome)).toEqual({ rejected: [{ index: 1, reason: 'value 5 is outside [0, 1]' }], stored: 2 });
  });

  it('tells repeated resources apart by input, and lets a stored entry keep its element', async () => {
    const elements = [{ id_resource: 73, input: 7 }, { id_resource: 73, input: 1 }, { id_resource: 73, input: 9 }];
    const { client } = setup([
      ok({ success: [created(73, 1, 1)], failed: [{ id_resource: 73, input: 9, error: 'too big' }, { id_resource: 73, input: 7 }] }),
      // No input on the failed entry: the stored entry's raw_data claims element 0 first.
      ok({ success: [created(73, 7, 2), created(73, 9, 3)], failed: [{ id_resource: 73 }] }),
    ]);
    expect(split(await client.createFeeds(elements))).toEqual({
      rejected: [{ index: 0, reason: 'rejected by the service' }, { index: 2, reason: 'too big' }],
      stored: 1,
    });
    expect(split(await client.createFeeds(elements))).toEqual({ rejected: [{ index: 1, reason: 'rejected by the service' }], stored: 2 });
  });

  it('uses a failed entry\'s index when it gives one', async () => {
    const ids = [73, 73, 74];
    const { client } = setup([ok({ success: [created(73, 1, 1), created(74, 1, 2)], failed: [{ id_resource: 73, index: 0, message: 'no' }] })]);
    const outcome = await client.createFeedsEncoded('[…]', 3, (i) => ids[i]);
    expect(split(outcome)).toEqual({ rejected: [{ index: 0, reason: 'no' }], stored: 2 });
  });

  it('maps an encoded batch\'s failed entries by id_resource, in order', async () => {
    const ids = [73, 74, 74, 75];
    const { client } = setup([ok({
      success: [created(73, 1, 1), created(74, 0, 2)],
      failed: [{ id_resource: 74, message: 'first 74' }, { id_resource: 75, message: 'the 75' }],
    })]);
    // The stored 74 takes the first 74 element; the failed 74 the next one.
    const outcome = await client.createFeedsEncoded('[…]', 4, (i) => ids[i]);
    expect(split(outcome)).toEqual({ rejected: [{ index: 2, reason: 'first 74' }, { index: 3, reason: 'the 75' }], stored: 2 });
  });
});

describe('the {success, failed} form for an encoded body', () => {
  it('matches failed entries by their input, whatever order the service lists them in', async () => {
    const ids = [73, 73, 73, 73];
    const body = JSON.stringify([0, 1, 2, 3].map((v) => ({ id_resource: 73, input: v })));
    const { client } = setup([ok({
      success: [created(73, 0, 1), created(73, 3, 2)],
      failed: [{ id_resource: 73, input: 2, message: 'two' }, { id_resource: 73, input: 1, message: 'one' }],
    })]);
    const outcome = await client.createFeedsEncoded(body, 4, (i) => ids[i]);
    expect(split(outcome)).toEqual({ rejected: [{ index: 1, reason: 'one' }, { index: 2, reason: 'two' }], stored: 2 });
  });
});

describe('malformed answers', () => {
  const cases: { name: string; call: (c: FeedClient) => Promise<unknown>; answer: HttpResult; issue: string; post?: boolean }[] = [
    { name: 'not JSON', call: (c) => c.getResource(73), answer: answer(200, '{"success": tr'), issue: 'body is not JSON' },
    { name: 'a JSON array body', call: (c) => c.getResource(73), answer: answer(200, []), issue: 'body: expected object, got array' },
    {
      name: 'success false with 200',
      call: (c) => c.getResource(73),
      answer: answer(200, { success: false, payload: null, message: 'nope' }),
      issue: 'success: false with HTTP 200: nope',
    },
    {
      name: 'message missing',
      call: (c) => c.getResource(73),
      answer: answer(200, { success: true, payload: resource73() }),
      issue: 'message: missing',
    },
    { name: 'payload missing', call: (c) => c.getResource(73), answer: answer(200, { success: true, message: '' }), issue: 'payload: missing' },
    {
      name: 'payload of the wrong type',
      call: (c) => c.getResources([73]),
      answer: ok(resource73()),
      issue: 'payload: expected array, got object',
    },
    {
      name: 'a missing field',
      call: (c) => c.getResource(73),
      answer: ok({ ...resource73(), name: undefined }),
      issue: 'payload.name: missing',
    },
    {
      name: 'a wrong type deep inside subtype',
      call: (c) => c.getResources([74, 73]),
      answer: ok([resourceWithoutFeeds(), { ...resource73(), subtype: { ...binarySubtype(), data_restriction_end_range: '1' } }]),
      issue: 'payload[1].subtype.data_restriction_end_range: expected integer, got string',
    },
    {
      name: 'a non-integer where an integer belongs',
      call: (c) => c.getResource(73),
      answer: ok({ ...resource73(), lifetime: 1.5 }),
      issue: 'payload.lifetime: expected integer, got number 1.5',
    },
    {
      name: 'a number where a read raw_data string belongs',
      call: (c) => c.lastFeeds([73]),
      answer: ok([{ ...feed(73, 1, '1'), raw_data: 1 }]),
      issue: 'payload[0].raw_data: expected string, got number 1',
    },
    {
      name: 'null where last_feed must be an object',
      call: (c) => c.getResource(73),
      answer: ok({ ...resource73(), last_feed: { ...feed(73, 1, '1'), created_at: null } }),
      issue: 'payload.last_feed.created_at: expected string, got null',
    },
    {
      name: 'the wrong number of records',
      call: (c) => c.getResources([73, 74]),
      answer: ok([resource73()]),
      issue: 'payload: expected 2 records, got 1',
    },
    {
      name: 'a record of another resource',
      call: (c) => c.firstFeeds([73, 74]),
      answer: ok([feed(73, 1, '1'), feed(75, 2, '1')]),
      issue: 'payload[1].id_resource: expected 74, got 75',
    },
    {
      name: 'another resource for operation 1',
      call: (c) => c.getResource(73),
      answer: ok(resourceWithoutFeeds(74)),
      issue: 'payload.id_resource: expected 73, got 74',
    },
    {
      name: 'null for operation 2',
      call: (c) => c.getResources([73]),
      answer: ok([null]),
      issue: 'payload[0]: expected object, got null',
    },
    {
      name: 'a created feed on another resource',
      call: (c) => c.createFeed(73, 1),
      answer: ok(created(74, 1, 1)),
      issue: 'payload.id_resource: expected 73, got 74',
      post: true,
    },
    {
      name: 'an operation-4 entry count mismatch',
      call: (c) => c.createFeeds([{ id_resource: 73, input: 1 }, { id_resource: 74, input: 1 }]),
      answer: ok([created(73, 1, 1)]),
      issue: 'payload: expected 2 entries, got 1',
      post: true,
    },
    {
      name: 'an operation-4 entry out of order',
      call: (c) => c.createFeedsEncoded('[…]', 2, (i) => [73, 74][i]),
      answer: ok([created(74, 1, 1), created(73, 1, 2)]),
      issue: 'payload[0].id_resource: expected 73, got 74',
      post: true,
    },
    {
      name: 'a {success, failed} form that does not add up',
      call: (c) => c.createFeeds([{ id_resource: 73, input: 1 }, { id_resource: 74, input: 1 }]),
      answer: ok({ success: [created(73, 1, 1)], failed: [] }),
      issue: 'payload: 1 stored and 0 failed entries for 2 elements',
      post: true,
    },
    {
      name: 'a failed entry that names no element of the request',
      call: (c) => c.createFeeds([{ id_resource: 73, input: 1 }, { id_resource: 74, input: 1 }]),
      answer: ok({ success: [created(73, 1, 1)], failed: [{ id_resource: 99 }] }),
      issue: 'payload.failed[0]: no unmatched element with id_resource 99',
      post: true,
    },
    {
      name: 'a failed entry without id_resource',
      call: (c) => c.createFeeds([{ id_resource: 73, input: 1 }]),
      answer: ok({ success: [], failed: [{ message: 'bad' }] }),
      issue: 'payload.failed[0].id_resource: missing',
      post: true,
    },
    {
      name: 'a failed entry whose index points at another resource',
      call: (c) => c.createFeeds([{ id_resource: 73, input: 1 }, { id_resource: 74, input: 1 }]),
      answer: ok({ success: [created(74, 1, 1)], failed: [{ id_resource: 73, index: 1 }] }),
      issue: 'payload.failed[0].index: 1 is not an unmatched element with id_resource 73',
      post: true,
    },
    {
      name: 'a 2xx other than 200',
      call: (c) => c.createFeed(73, 1),
      answer: answer(204, ''),
      issue: 'unexpected HTTP 204',
      post: true,
    },
  ];

  for (const c of cases) {
    it(`rejects ${c.name} as a retryable protocol error`, async () => {
      const { client, requests } = setup([c.answer]);
      const e = await rejection(c.call(client));
      const path = requests[0].url.slice(BASE.length);
      expect(e.message).toBe(`malformed answer to ${c.post ? 'POST' : 'GET'} ${path}: ${c.issue}`);
      expect(e.kind).toBe('protocol');
      expect(e.retryable).toBe(true);
      expect(e.maybeDelivered).toBe(true);
      expect(e.status).toBe(c.answer.kind === 'response' ? c.answer.status : 0);
      expect(e.retryAfterMs).toBe(-1);
      expect(e.elementIndex).toBe(-1);
    });
  }

  it('rejects only with FeedError, whatever the payload, on every operation', async () => {
    const payloads: unknown[] = [null, 0, 'x', true, [], {}, [5], [[]], { success: null, failed: [] }, { success: [{}], failed: [] }];
    const calls: ((c: FeedClient) => Promise<unknown>)[] = [
      (c) => c.getResource(73),
      (c) => c.getResources([73]),
      (c) => c.createFeed(73, 1),
      (c) => c.createFeeds([{ id_resource: 73, input: 1 }]),
      (c) => c.createFeedsEncoded('[…]', 1, () => 73),
      (c) => c.firstFeeds([73]),
      (c) => c.lastFeeds([73]),
    ];
    for (const call of calls) {
      for (const payload of payloads) {
        const { client } = setup([ok(payload)]);
        const e = await rejection(call(client));
        expect(e.kind).toBe('protocol');
      }
    }
  });
});

describe('failures', () => {
  it('turns a failure envelope into an http error that names the request and the reason', async () => {
    const { client } = setup([failure(404, 'resource 99 not found')]);
    const e = await rejection(client.getResources([73, 99]));
    expect(e.message).toBe(`HTTP 404 on GET ${DEVICE}/resources/73,99: resource 99 not found`);
    expect(e).toMatchObject({ kind: 'http', status: 404, retryable: false, maybeDelivered: false, retryAfterMs: -1, elementIndex: -1 });
    expect(e.name).toBe('FeedError');
    expect(e).toBeInstanceOf(Error);
  });

  it('reads an HTML error page of a proxy as a retryable http error', async () => {
    const html = '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body><center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>';
    const { client } = setup([answer(502, html)]);
    const e = await rejection(client.createFeedsEncoded('[…]', 1, () => 73));
    expect(e.message).toBe(`HTTP 502 on POST ${DEVICE}/resources/feeds: 502 Bad Gateway 502 Bad Gateway nginx`);
    expect(e).toMatchObject({ kind: 'http', status: 502, retryable: true, maybeDelivered: false, elementIndex: -1 });
  });

  it('says so when an error answer is empty', async () => {
    const { client } = setup([answer(503, '')]);
    expect((await rejection(client.getResource(73))).message).toBe(`HTTP 503 on GET ${DEVICE}/resource/73: empty answer`);
  });

  it('retries 408, 429 and 5xx, and no other status', async () => {
    const statuses = [400, 401, 403, 404, 405, 408, 413, 415, 422, 429, 500, 502, 503, 504, 301];
    const { client } = setup(statuses.map((s) => failure(s, 'status ' + s)));
    const retryable: number[] = [];
    for (const s of statuses) {
      const e = await rejection(client.getResource(73));
      expect(e.status).toBe(s);
      if (e.retryable) retryable.push(s);
    }
    expect(retryable).toEqual([408, 429, 500, 502, 503, 504]);
  });

  it('recognises a refused token', async () => {
    const { client } = setup([failure(401, 'invalid token'), failure(403, 'forbidden'), failure(404, 'no device')]);
    expect(isAuthError(await rejection(client.getResource(73)))).toBe(true);
    expect(isAuthError(await rejection(client.getResource(73)))).toBe(true);
    expect(isAuthError(await rejection(client.getResource(73)))).toBe(false);
    expect(isAuthError(new Error('HTTP 401'))).toBe(false);
  });

  it('parses Retry-After in seconds, and as a date measured from the answer\'s own Date', async () => {
    const dated = (status: number, retryAfter: string, date: string | null): HttpResult =>
      ({ kind: 'response', status, retryAfter, date, body: JSON.stringify({ success: false, payload: null, message: 'busy' }) });
    const { client } = setup([
      failure(429, 'slow down', '120'),
      // The service's clock in 1970 and in 2100: only the difference of its two dates counts.
      dated(503, 'Thu, 01 Jan 1970 00:00:05 GMT', 'Thu, 01 Jan 1970 00:00:00 GMT'),
      dated(503, 'Fri, 31 Dec 2100 23:59:59 GMT', 'Fri, 31 Dec 2100 23:59:54 GMT'),
      // Without its Date header a date cannot be measured: no device clock.
      dated(503, 'Wed, 21 Oct 2015 07:28:00 GMT', null),
    ]);
    expect((await rejection(client.getResource(73))).retryAfterMs).toBe(120_000);
    expect((await rejection(client.getResource(73))).retryAfterMs).toBe(5_000);
    expect((await rejection(client.getResource(73))).retryAfterMs).toBe(5_000);
    expect((await rejection(client.getResource(73))).retryAfterMs).toBe(-1);
    expect(parseRetryAfter(' 5 ')).toBe(5000);
    expect(parseRetryAfter('0')).toBe(0);
    for (const junk of [null, '', 'soon', '1.5', '-3', '5s', '12345678901']) expect(parseRetryAfter(junk, 'Thu, 01 Jan 1970 00:00:00 GMT')).toBe(-1);
    // A date already past asks for no wait.
    expect(parseRetryAfter('Thu, 01 Jan 1970 00:00:00 GMT', 'Thu, 01 Jan 1970 00:01:00 GMT')).toBe(0);
    // The obsolete forms, as a recipient must still read them.
    expect(parseRetryAfter('Sunday, 06-Nov-94 08:49:40 GMT', 'Sun Nov  6 08:49:37 1994')).toBe(3_000);
  });

  it('reads the three forms of an HTTP-date without Date.parse', () => {
    const at = Date.UTC(1994, 10, 6, 8, 49, 37);
    for (const text of ['Sun, 06 Nov 1994 08:49:37 GMT', 'Sunday, 06-Nov-94 08:49:37 GMT', 'Sun Nov  6 08:49:37 1994', ' sun, 6 nov 1994 08:49:37 GMT ']) {
      expect(parseHttpDate(text), text).toBe(at);
    }
    expect(parseHttpDate('Thu, 01 Jan 1970 00:00:00 GMT')).toBe(0);
    expect(parseHttpDate('Fri, 01 Jan 2100 00:00:00 GMT')).toBe(Date.UTC(2100, 0, 1));
    expect(parseHttpDate('Thursday, 01-Jan-70 00:00:00 GMT')).toBe(0);
    expect(parseHttpDate('Saturday, 01-Jan-00 00:00:00 GMT')).toBe(Date.UTC(2000, 0, 1));
    for (const junk of ['', '1994-11-06T08:49:37Z', 'Sun, 06 Nov 1994 08:49:37 CET', 'Sun, 06 Foo 1994 08:49:37 GMT', 'Sun, 06 Nov 1994 24:00:00 GMT', 'Sun, 32 Nov 1994 08:49:37 GMT', 'Sun, 06 Nov 1994 08:49 GMT']) {
      expect(parseHttpDate(junk), junk).toBeNaN();
    }
  });

  it('bounds each answer by what its request can honestly bring', async () => {
    const ids = Array.from({ length: 150 }, (_, i) => i + 1);
    const body = '[{"id_resource":73,"input":1},{"id_resource":73,"input":"é"}]';
    const { client, requests } = setup([
      ok(resource73()),
      ok(ids.slice(0, 100).map((id) => ({ ...resource73(), id_resource: id }))),
      ok(ids.slice(100).map((id) => ({ ...resource73(), id_resource: id }))),
      ok([created(73, 1, 1), created(73, 'é', 2)]),
    ]);
    await client.getResource(73);
    await client.getResources(ids);
    await client.createFeedsEncoded(body, 2, () => 73);
    // 16 KB for an envelope or an error page; 16 KB a record read; 6 bytes a body character and 512 an element written.
    expect(requests.map((r) => r.maxResponseBytes)).toEqual([16384 + 16384, 16384 + 100 * 16384, 16384 + 50 * 16384, 16384 + 6 * body.length + 2 * 512]);
  });

  it('follows a 307 or 308 to the same origin with the same method, body and token', async () => {
    const moved = (status: number, location: string): HttpResult => ({ kind: 'response', status, retryAfter: null, location, body: '' });
    const { client, requests } = setup([
      moved(307, 'feeds?v=2'),
      moved(308, BASE.toUpperCase().replace('HTTP', 'http') + '/v2/../api/./device/' + PUBLIC_KEY + '/resources/feeds#x'),
      ok([created(73, 1, 1)]),
    ]);
    await client.createFeedsEncoded('[{"id_resource":73,"input":1}]', 1, () => 73);
    expect(requests.map((r) => r.url)).toEqual([
      `${BASE}${DEVICE}/resources/feeds`,
      `${BASE}${DEVICE}/resources/feeds?v=2`,
      `${BASE}${DEVICE}/resources/feeds`,
    ]);
    for (const r of requests) {
      expect([r.method, r.body, r.headers.Authorization]).toEqual(['POST', '[{"id_resource":73,"input":1}]', 'Bearer ' + TOKEN]);
    }
  });

  it('reports any other redirect with its Location, and never sends the token to another origin', async () => {
    const moved = (status: number, location: string | null): HttpResult => ({ kind: 'response', status, retryAfter: null, location, body: '' });
    const cases: [HttpResult[], number, string, string][] = [
      [[moved(307, 'https://svc.test:8080/api')], 307, 'https://svc.test:8080/api', 'another origin'],
      [[moved(308, '//elsewhere.test/x?token=' + TOKEN)], 308, '//elsewhere.test/x?token=[redacted]', 'another origin'],
      [[moved(307, 'http://user@svc.test:8080/x')], 307, 'http://user@svc.test:8080/x', 'another origin'],
      [[moved(301, '/api/v2')], 301, '/api/v2', 'it may turn the request into a GET'],
      [[moved(302, '/api/v2')], 302, '/api/v2', 'it may turn the request into a GET'],
      [[moved(303, '/api/v2')], 303, '/api/v2', 'it may turn the request into a GET'],
      [[moved(307, null)], 307, '', 'without a Location'],
      [[moved(307, '/a'), moved(307, '/b'), moved(307, '/c'), moved(307, '/d')], 307, '/d', 'after 3 redirects'],
    ];
    for (const [answers, status, location, why] of cases) {
      const { client, requests } = setup(answers);
      const e = await rejection(client.createFeedsEncoded('[]', 1, () => 73));
      expect(e, location).toMatchObject({ kind: "http", status, location, retryable: false, maybeDelivered: false });
      expect(e.message).toContain(why);
      expect(e.message).not.toContain(TOKEN);
      expect(requests.every((r) => r.url.startsWith(BASE + '/'))).toBe(true);
    }
  });

  it('resolves a Location as RFC 3986 does, without the URL global', () => {
    const from = 'http://h.test/a/b/c?q=1';
    const cases: [string, string | null][] = [
      ['d', 'http://h.test/a/b/d'],
      ['./d/', 'http://h.test/a/b/d/'],
      ['../d', 'http://h.test/a/d'],
      ['../../../../d', 'http://h.test/d'],
      ['?y', 'http://h.test/a/b/c?y'],
      ['', 'http://h.test/a/b/c?q=1'],
      ['/d/./e/..', 'http://h.test/d/'],
      ['HTTP://H.TEST:80/x', 'http://h.test/x'],
      ['http://h.test:8080/x', null],
      ['https://h.test/x', null],
      ['ftp://h.test/x', null],
      ['http://h.test.evil/x', null],
      ['//h.test/x#frag', 'http://h.test/x'],
      ['/x y', null],
      ['\\\\evil/x', null],
    ];
    for (const [location, target] of cases) expect(sameOriginTarget(from, location), location).toBe(target);
    expect(sameOriginTarget('http://[::1]:8080/a', '/b')).toBe('http://[::1]:8080/b');
    expect(sameOriginTarget('http://[::1]/a', 'http://[::1]:80/b')).toBe('http://[::1]/b');
  });

  it('takes the element index from an operation-4 4xx message', async () => {
    const batch = [{ id_resource: 73, input: 1 }, { id_resource: 99, input: 1 }];
    const { client } = setup([
      failure(404, 'element 1: resource 99 not found'),
      failure(422, 'element 0: value 7 is outside [0, 1]'),
      failure(400, 'element 5: no input'), // beyond the batch: names nothing of it
      failure(500, 'element 1: database down'),
      failure(404, 'element 1: resource 99 not found'),
    ]);
    expect((await rejection(client.createFeeds(batch))).elementIndex).toBe(1);
    expect((await rejection(client.createFeedsEncoded('[…]', 2, (i) => batch[i].id_resource))).elementIndex).toBe(0);
    expect((await rejection(client.createFeeds(batch))).elementIndex).toBe(-1);
    expect((await rejection(client.createFeeds(batch))).elementIndex).toBe(-1);
    expect((await rejection(client.getResources([73, 99]))).elementIndex).toBe(-1);
  });

  it('passes the host\'s network and timeout results on, with maybeDelivered', async () => {
    const { client } = setup([
      { kind: 'network', message: 'ECONNREFUSED 127.0.0.1:8080', maybeDelivered: false },
      { kind: 'network', message: 'socket hang up', maybeDelivered: true },
      { kind: 'timeout', maybeDelivered: true },
    ]);
    const refused = await rejection(client.getResource(73));
    expect(refused.message).toBe(`network error on GET ${DEVICE}/resource/73: ECONNREFUSED 127.0.0.1:8080`);
    expect(refused).toMatchObject({ kind: 'network', status: 0, retryable: true, maybeDelivered: false, retryAfterMs: -1 });
    const hangUp = await rejection(client.createFeed(73, 1));
    expect(hangUp).toMatchObject({ kind: 'network', retryable: true, maybeDelivered: true });
    const timeout = await rejection(client.createFeeds([{ id_resource: 73, input: 1 }], { silent: true }));
    expect(timeout.message).toBe(`timeout after 10000 ms on POST ${DEVICE}/resources/feeds?silent=true`);
    expect(timeout).toMatchObject({ kind: 'timeout', status: 0, retryable: true, maybeDelivered: true });
  });

  it('turns an adapter that breaks its contract and rejects into a network error', async () => {
    const client = new FeedClient(() => Promise.reject(new TypeError('boom')), { baseUrl: BASE, publicKey: PUBLIC_KEY, timeoutMs: 1 });
    const e = await rejection(client.getResource(73));
    expect(e).toMatchObject({ kind: 'network', maybeDelivered: true });
    expect(e.message).toMatch(/TypeError: boom/);
  });
});

describe('the token', () => {
  const echo = `token ${TOKEN} is not the device's (Authorization: Bearer ${TOKEN})`;

  function expectClean(e: FeedError) {
    for (const text of [e.message, String(e), e.stack ?? '']) {
      expect(text).not.toContain(TOKEN);
    }
  }

  it('never appears in an error, even when the server or the host echoes it', async () => {
    const { client } = setup([
      failure(401, echo),
      answer(502, `<html><body>${echo}</body></html>`),
      answer(200, { success: false, payload: null, message: echo }),
      { kind: 'network', message: `request with Authorization: Bearer ${TOKEN} failed`, maybeDelivered: false },
      failure(400, `element 0: ${TOKEN}`),
    ]);
    const errors = [
      await rejection(client.getResource(73)),
      await rejection(client.getResource(73)),
      await rejection(client.getResource(73)),
      await rejection(client.getResource(73)),
      await rejection(client.createFeeds([{ id_resource: 73, input: 1 }])),
    ];
    for (const e of errors) expectClean(e);
    expect(errors[0].message).toBe(`HTTP 401 on GET ${DEVICE}/resource/73: token [redacted] is not the device's (Authorization: Bearer [redacted])`);
  });

  it('never appears in a rejected element\'s reason', async () => {
    const { client } = setup([ok({ success: [], failed: [{ id_resource: 73, message: echo }] })]);
    const outcome = await client.createFeeds([{ id_resource: 73, input: 1 }]);
    expect(outcome.rejected[0].reason).not.toContain(TOKEN);
  });

  it('redacts any bearer credential, not only the client\'s own', () => {
    expect(redact('Authorization: bearer abc.def-123, next', undefined)).toBe('Authorization: Bearer [redacted], next');
    expect(redact('x' + TOKEN + 'y', TOKEN)).toBe('x[redacted]y');
  });

  it('takes a short token out where it stands alone, never out of the words it is a piece of', () => {
    const line = 'command poll: network: token a refused at /api?token=a&x=1 (a)';
    expect(redact(line, 'a')).toBe('command poll: network: token [redacted] refused at /api?token=[redacted]&x=1 ([redacted])');
    expect(redact('a', 'a')).toBe('[redacted]');
    expect(redact('secrets; the secret: secret1', 'secret')).toBe('secrets; the [redacted]: secret1');
    // Overlapping occurrences, each glued to the other: none stands alone.
    expect(redact('aaa', 'aa')).toBe('aaa');
    // Again and again (a message redacted, then logged): the marker is no place for a letter of the token.
    for (const token of ['c', 'd', 'e', 'r', 'ted', 'redact']) {
      const once = redact(`token ${token}: reset`, token);
      expect(once, token).toBe('token [redacted]: reset');
      expect(redact(redact(once, token), token), token).toBe(once);
    }
  });

  it('takes a token of 8 characters or more out wherever it is, glued to letters too', () => {
    expect(redact('?token%3D' + TOKEN + '&x', TOKEN)).toBe('?token%3D[redacted]&x');
    expect(redact('"bad token:\\n' + TOKEN + '"', TOKEN)).toBe('"bad token:\\n[redacted]"');
    expect(redact('tokens: tokenize', 'tokenize')).toBe('tokens: [redacted]');
  });
});
