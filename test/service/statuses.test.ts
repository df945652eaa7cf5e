// Every row of the status table (docs/service.md), each with the failure envelope and a message naming the
// fault; operation 4's atomicity; and that a refused request changes nothing.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService } from '../../src/service';
import type { RunningService } from '../../src/service';
import { device, request } from '../support/client';
import type { Reply } from '../support/client';
import { A, B, SEED } from './fixtures';

let service: RunningService;
let a: ReturnType<typeof device>;

beforeAll(async () => {
  service = await startService({ seed: SEED, limits: { maxIdsInPath: 5, maxBatchElements: 4, maxBodyBytes: 2000 } });
  a = device(service.url, A.key, A.token);
});
afterAll(() => service.close());

function fails(reply: Reply, status: number, message: RegExp): void {
  expect(reply.status, reply.text).toBe(status);
  expect(reply.headers['content-type']).toBe('application/json');
  expect(reply.headers['content-language']).toBe('en');
  expect(Number(reply.headers['content-length'])).toBe(Buffer.byteLength(reply.text));
  expect(Object.keys(reply.json)).toEqual(['success', 'payload', 'message']);
  expect(reply.json.success).toBe(false);
  expect(reply.json.payload).toBeNull();
  expect(reply.json.message).toMatch(message);
}

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  request(`${a.root}${path}`, 'POST', { body, token: A.token, headers });

describe('400: malformed requests', () => {
  it('an id that is not a positive integer', async () => {
    for (const id of ['0', 'abc', '-1', '1.5', '073', '1e3', '99999999999999999']) {
      fails(await a.getResource(id), 400, new RegExp(`id "${id}" is not a positive integer`));
    }
    fails(await a.getResources('73,x'), 400, /id "x" is not a positive integer/);
    fails(await a.firstFeeds('73,,74'), 400, /id "" is not a positive integer/);
    fails(await a.createFeed('0', 1), 400, /not a positive integer/);
  });

  it('an empty id list', async () => {
    fails(await a.getResources(''), 400, /id list in the path is empty/);
    fails(await a.lastFeeds(''), 400, /id list in the path is empty/);
  });

  it('a body that is not JSON or not the right shape', async () => {
    fails(await post('/resource/73/feeds', '{"input": 1'), 400, /not valid JSON/);
    fails(await post('/resource/73/feeds', ''), 400, /body is empty/);
    fails(await post('/resource/73/feeds', '[{"input": 1}]'), 400, /must be a JSON object/);
    fails(await post('/resource/73/feeds', Buffer.from([0x7b, 0xff, 0x7d]).toString('latin1')), 400, /not valid/);
    fails(await post('/resources/feeds', '{"id_resource": 73, "input": 1}'), 400, /must be a JSON array/);
    fails(await post('/resources/feeds', '[]'), 400, /empty array/);
  });

  it('an element without id_resource or input, or with an input of the wrong type', async () => {
    fails(await a.createFeed(73, null), 400, /input must be a number, a boolean or a string/);
    fails(await a.createFeed(73, { v: 1 }), 400, /input must be/);
    fails(await post('/resource/73/feeds', '{}'), 400, /input is missing/);
    fails(await a.createFeeds([{ id_resource: 73, input: 1 }, { input: 1 }]), 400, /^element 1: id_resource is missing$/);
    fails(await a.createFeeds([{ id_resource: 73 }]), 400, /^element 0: input is missing$/);
    fails(await a.createFeeds([{ id_resource: '73', input: 1 }]), 400, /^element 0: id_resource is not a positive integer$/);
    fails(await a.createFeeds([{ id_resource: 73, input: [1] }]), 400, /^element 0: input must be/);
    fails(await a.createFeeds([{ id_resource: 73, input: 1 }, 5]), 400, /^element 1: not an object/);
  });

  it('a silent value other than true, false, 1, 0', async () => {
    for (const query of ['?silent=yes', '?silent=', '?silent', '?silent=TRUE', '?silent=true&silent=false']) {
      fails(await a.getResource(73, query), 400, /silent/);
    }
    for (const query of ['?silent=true', '?silent=false', '?silent=1', '?silent=0', '?other=x']) {
      expect((await a.getResource(73, query)).status).toBe(200);
    }
  });
});

describe('401: the bearer token', () => {
  it('operations 3 and 4 without Authorization', async () => {
    fails(await a.createFeed(73, 1, '', {}), 401, /needs Authorization: Bearer <token>/);
    fails(await a.createFeeds([{ id_resource: 73, input: 1 }], '', {}), 401, /needs Authorization/);
  });

  it('an Authorization header that is not a bearer token', async () => {
    for (const value of ['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer ', A.token]) {
      fails(await a.getResource(73, '', { headers: { Authorization: value } }), 401, /not of the form Bearer <token>/);
    }
  });

  it('a token that is not the device’s, on every operation: never silently ignored', async () => {
    for (const token of ['wrong', B.token, A.token + 'x', A.token.slice(1)]) {
      const opts = { token };
      fails(await a.getResource(73, '', opts), 401, /token is not this device's/);
      fails(await a.getResources('73', '', opts), 401, /token is not this device's/);
      fails(await a.createFeed(73, 1, '', opts), 401, /token is not this device's/);
      fails(await a.createFeeds([{ id_resource: 73, input: 1 }], '', opts), 401, /token is not this device's/);
      fails(await a.firstFeeds('73', '', opts), 401, /token is not this device's/);
      fails(await a.lastFeeds('73', '', opts), 401, /token is not this device's/);
    }
  });

  it('names the scheme in WWW-Authenticate and never echoes the token', async () => {
    const reply = await a.getResource(73, '', { token: 'secret-guess-123' });
    expect(reply.headers['www-authenticate']).toBe('Bearer');
    expect(reply.text).not.toContain('secret-guess-123');
  });
});

describe('404: devices, resources, paths', () => {
  it('no device with that public key', async () => {
    const ghost = device(service.url, 'NOSUCHDEVICE', A.token);
    fails(await ghost.getResource(73), 404, /no device has the public key "NOSUCHDEVICE"/);
    fails(await ghost.createFeed(73, 1), 404, /no device/);
  });

  it('a resource that does not exist and one of another device get the same answer', async () => {
    const missing = await a.getResource(99);
    const foreign = await a.getResource(80);
    fails(missing, 404, /^resource 99 not found$/);
    fails(foreign, 404, /^resource 80 not found$/);
    expect(foreign.text).toBe(missing.text.replace('99', '80'));
    fails(await a.getResources('73,80'), 404, /^resource 80 not found$/);
    fails(await a.firstFeeds('80'), 404, /^resource 80 not found$/);
    fails(await a.lastFeeds('73,99'), 404, /^resource 99 not found$/);
    fails(await a.createFeed(80, 1), 404, /^resource 80 not found$/);
    fails(await a.createFeeds([{ id_resource: 73, input: 1 }, { id_resource: 80, input: 1 }]), 404, /^element 1: resource 80 not found$/);
    // B's own token does not open A's resources through B's key either.
    fails(await device(service.url, B.key, B.token).getResource(73, '', { token: B.token }), 404, /^resource 73 not found$/);
  });

  it('an unknown path', async () => {
    for (const path of ['/', '/api', '/api/device', `/api/device/${A.key}`, `/api/device/${A.key}/resource`, `/api/device/${A.key}/resource/73/`, `/api/device/${A.key}/things/73`, `/api/device//resource/73`, `/api/device/${A.key}/resources/73/feeds/middle`]) {
      fails(await request(service.url + path, 'GET'), 404, /there is no operation at/);
    }
  });
});

describe('405: a known path with the wrong method', () => {
  it('answers 405 with Allow', async () => {
    for (const [method, path, allow] of [
      ['POST', '/resource/73', 'GET'],
      ['GET', '/resource/73/feeds', 'POST'],
      ['GET', '/resources/feeds', 'POST'],
      ['DELETE', '/resources/73', 'GET'],
      ['PUT', '/resources/73/feeds/last', 'GET'],
      ['HEAD', '/resource/73', 'GET'],
    ]) {
      const reply = await request(`${a.root}${path}`, method);
      expect(reply.status).toBe(405);
      expect(reply.headers.allow).toBe(allow);
      if (method !== 'HEAD') fails(reply, 405, new RegExp(`${method} is not allowed here; use ${allow}`));
    }
  });
});

describe('413: limits', () => {
  it('a body over the size limit', async () => {
    const big = JSON.stringify({ input: 'x'.repeat(3000) });
    fails(await post('/resource/73/feeds', big), 413, /larger than the limit of 2000 bytes/);
  });

  it('more ids or elements than the limits', async () => {
    fails(await a.getResources('73,73,73,73,73,73'), 413, /names 6 ids; the limit is 5/);
    expect((await a.getResources('73,73,73,73,73')).status).toBe(200);
    fails(await a.createFeeds(Array.from({ length: 5 }, () => ({ id_resource: 73, input: 1 }))), 413, /5 elements; the limit is 4/);
  });
});

describe('415: a POST whose Content-Type is not JSON', () => {
  it('missing, another type, or another charset', async () => {
    const body = '{"input": 1}';
    fails(await post('/resource/73/feeds', body, { 'Content-Type': 'text/plain' }), 415, /is not JSON/);
    fails(await post('/resource/73/feeds', body, { 'Content-Type': 'application/x-www-form-urlencoded' }), 415, /is not JSON/);
    fails(await post('/resource/73/feeds', body, { 'Content-Type': 'application/json; charset=latin1' }), 415, /UTF-8/);
    const bare = await new Promise<Reply>((resolve, reject) => {
      // The test client always sets a Content-Type; this one must not.
      const req = httpRequest(`${a.root}/resource/73/feeds`, { method: 'POST', headers: { Authorization: `Bearer ${A.token}`, 'Content-Length': String(body.length) } }, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: JSON.parse(text) }));
      });
      req.on('error', reject);
      req.end(body);
    });
    fails(bare, 415, /has no Content-Type/);
    for (const type of ['application/json', 'application/json; charset=utf-8', 'Application/JSON;charset="UTF-8"', 'application/vnd.feed+json']) {
      expect((await post('/resource/73/feeds', body, { 'Content-Type': type })).status).toBe(200);
    }
  });
});

describe('422: validation as docs/interface.md states', () => {
  it('a range subtype takes numbers, booleans and numeric strings within the range', async () => {
    for (const input of [0, 1, true, false, '1', '0.5', '-0', '1e0']) expect((await a.createFeed(73, input)).status, String(input)).toBe(200);
    for (const input of [-40, 125, '125', 20.25]) expect((await a.createFeed(74, input)).status).toBe(200);
    fails(await a.createFeed(73, 2), 422, /^resource 73: value 2 is outside \[0, 1\]$/);
    fails(await a.createFeed(74, -40.5), 422, /outside \[-40, 125\]/);
    fails(await a.createFeed(74, 'warm'), 422, /^resource 74: value "warm" is not numeric$/);
    fails(await a.createFeed(74, ' 20'), 422, /is not numeric/);
    fails(await post('/resource/74/feeds', '{"input": 1e400}'), 422, /not a finite number/);
  });

  it('a regex subtype takes only strings whose whole text matches', async () => {
    for (const input of ['on', 'off']) expect((await a.createFeed(75, input)).status).toBe(200);
    for (const input of ['ON', 'onoff', 'on ', 1, true]) fails(await a.createFeed(75, input), 422, /^resource 75: value .* does not match \^\(\?:on\|off\)\$$/);
  });
});

describe('429: only when a rate limit is configured', () => {
  it('refuses beyond the bucket with Retry-After, and lets the device in again once time has passed', async () => {
    let now = 1_700_000_000_000;
    const limited = await startService({ seed: SEED, now: () => now, rateLimit: { requestsPerSecond: 2, burst: 3 } });
    try {
      const dev = device(limited.url, A.key, A.token);
      for (let i = 0; i < 3; i++) expect((await dev.getResource(73)).status).toBe(200);
      const refused = await dev.createFeed(73, 1);
      fails(refused, 429, /too many requests for this device; retry in 1 s/);
      expect(refused.headers['retry-after']).toBe('1');
      // Another device has its own bucket.
      expect((await device(limited.url, B.key, B.token).getResource(80)).status).toBe(200);
      now += 500;
      expect((await dev.createFeed(73, 1)).status).toBe(200);
      expect((await dev.getResource(73)).status).toBe(429);
    } finally {
      await limited.close();
    }
    // Without the option, the same burst passes.
    for (let i = 0; i < 10; i++) expect((await a.getResource(73)).status).toBe(200);
  });
});

describe('operation 4 is atomic', () => {
  it('stores nothing when any element is bad, names the first bad element, and changes no counter', async () => {
    const before = (await a.getResources('73,74,75', '?silent=true')).json.payload;
    const good = { id_resource: 73, input: 1 };
    const cases: [unknown[], number, RegExp][] = [
      [[good, { id_resource: 74, input: 20 }, { id_resource: 75, input: 'maybe' }], 422, /^element 2: resource 75: value "maybe" does not match/],
      [[good, { id_resource: 99, input: 1 }, { id_resource: 74, input: 999 }], 404, /^element 1: resource 99 not found$/],
      [[good, good, { id_resource: 74 }, { id_resource: 99, input: 1 }], 400, /^element 2: input is missing$/],
    ];
    for (const [elements, status, message] of cases) fails(await a.createFeeds(elements), status, message);
    const after = (await a.getResources('73,74,75', '?silent=true')).json.payload;
    // Only the two silent reads themselves were counted in between.
    for (let i = 0; i < 3; i++) {
      expect(after[i].id_last_feed).toBe(before[i].id_last_feed);
      expect(after[i].api_requests_usage).toBe(before[i].api_requests_usage + 1);
      expect(after[i].api_network_outgoing_usage).toBe(before[i].api_network_outgoing_usage);
      expect(after[i].lifetime_updated_at).toBe(before[i].lifetime_updated_at);
    }
  });
});
