// A seeded fuzz run: thousands of random and malformed requests (paths, ids, queries, headers, tokens,
// bodies) over HTTP, and malformed HTTP over raw sockets. No answer may be a 5xx or break the envelope,
// the service must not crash or log a fault, and afterwards it must still answer correctly: the last
// feed of every resource is the last one it acknowledged. FUZZ_SEED=n replays another run.
import { Agent, request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createRandom } from '../../src/core/host/random';
import { rawData } from '../../src/core/wire/validate';
import type { InputValue } from '../../src/core/wire/wire';
import { startService } from '../../src/service';
import type { RunningService } from '../../src/service';
import { device } from '../support/client';
import { exchange } from './raw';
import { A, B, SEED } from './fixtures';

const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 0x5eed);
const HTTP_REQUESTS = 4500;
const RAW_REQUESTS = 600;
const STATUSES = new Set([100, 200, 400, 401, 404, 405, 408, 413, 415, 422, 431]);

const random = createRandom(FUZZ_SEED);
const int = (n: number) => Math.floor(random() * n);
const pick = <T>(items: readonly T[]): T => items[int(items.length)];
const chance = (p: number) => random() < p;
const ascii = (length: number) => Array.from({ length }, () => String.fromCharCode(0x21 + int(94))).join('');

let service: RunningService;
const errorLog = vi.spyOn(console, 'error');

beforeAll(async () => {
  // Short timeouts so that truncated raw requests end quickly.
  service = await startService({ seed: SEED, timeouts: { headersMs: 400, requestMs: 800, keepAliveMs: 2000 } });
});
afterAll(() => service.close());

// ---- well-formed HTTP with random content ----

const RESOURCES = [73, 74, 75, 80, 99];

function input(): unknown {
  return pick<() => unknown>([
    () => int(3) - 1,
    () => (random() - 0.5) * 400,
    () => pick([1e308, -1e-308, 2 ** 53, -0, 0.1]),
    () => chance(0.5),
    () => pick(['on', 'off', 'ON', '12', '-40', '125.0', 'abc', '', ' 1', '1e2', 'ñandú', '\u0000', '0x10']),
    () => pick([null, [], {}, [1], { input: 1 }]),
  ])();
}

/** A sample's age (docs/interface.md, The sample's age): good ones, its bounds, and what it refuses. */
function age(): unknown {
  return pick([0, 1, 999, 86_400_000, 2_592_000_000, 2_592_000_001, -1, -0, 1.5, 2 ** 53, 1e300, '5', null, [], true]);
}

function json(depth = 0): unknown {
  if (depth > 3 || chance(0.4)) return input();
  if (chance(0.5)) return Array.from({ length: int(4) }, () => json(depth + 1));
  return Object.fromEntries(Array.from({ length: int(4) }, () => [pick(['id_resource', 'input', 'x', '']), json(depth + 1)]));
}

function element(): unknown {
  if (chance(0.1)) return json();
  const e: Record<string, unknown> = {};
  if (!chance(0.05)) e.id_resource = chance(0.9) ? pick(RESOURCES) : pick([0, -1, '73', 1.5, null]);
  if (!chance(0.05)) e.input = input();
  if (chance(0.3)) e.age_ms = age();
  return e;
}

function body(): string | Buffer | undefined {
  const valid = () =>
    chance(0.5) ? JSON.stringify({ input: input(), ...(chance(0.3) && { age_ms: age() }) }) : JSON.stringify(Array.from({ length: 1 + int(6) }, element));
  return pick<() => string | Buffer | undefined>([
    valid,
    valid,
    valid,
    () => JSON.stringify(json()),
    () => {
      const text = valid();
      const at = int(text.length);
      return chance(0.5) ? text.slice(0, at) : text.slice(0, at) + ascii(1) + text.slice(at + 1);
    },
    () => Buffer.from(Array.from({ length: int(64) }, () => int(256))),
    () => '['.repeat(int(50_000)),
    () => (chance(0.1) ? JSON.stringify(Array.from({ length: 1001 }, () => ({ id_resource: 73, input: 1 }))) : ''),
    () => undefined,
  ])();
}

function ids(): string {
  if (chance(0.03)) return Array.from({ length: 101 }, () => '73').join(',');
  const one = () => (chance(0.85) ? String(pick(RESOURCES)) : pick(['0', '-1', '1.5', 'abc', '', '073', '9007199254740993', '%37%33', '1e2']));
  return Array.from({ length: 1 + int(5) }, one).join(',');
}

interface Spec {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

// Mostly well-aimed (the right method, key and token), so that most requests reach the deeper checks.
function spec(): Spec {
  const owner = chance(0.8) ? A : B;
  const key = chance(0.85) ? owner.key : pick(['NOSUCH', '', owner.key.toLowerCase(), '%ZZ', '%35D4161963252F0EABB435339', ascii(8).replace(/[/?#%]/g, 'x')]);
  const root = `/api/device/${key}`;
  const id = chance(0.85) ? String(pick(RESOURCES)) : pick(['0', 'x', '', '-5', '1.0']);
  const [shape, right] = pick<[string, string]>([
    [`${root}/resource/${id}`, 'GET'],
    [`${root}/resource/${id}/feeds`, 'POST'],
    [`${root}/resource/${id}/feeds`, 'POST'],
    [`${root}/resources/${ids()}`, 'GET'],
    [`${root}/resources/feeds`, 'POST'],
    [`${root}/resources/feeds`, 'POST'],
    [`${root}/resources/${ids()}/feeds/first`, 'GET'],
    [`${root}/resources/${ids()}/feeds/last`, 'GET'],
    [`/${ascii(int(20)).replace(/[?#]/g, '/')}`, 'GET'],
  ]);
  let path = shape;
  if (chance(0.03)) path += '/';
  if (chance(0.03)) path = path.replace('/resource', '//resource');
  if (chance(0.03)) path = path.toUpperCase();
  path += pick(['', '', '', '', '?silent=true', '?silent=0', '?silent=yes', '?silent=', '?silent=1&silent=0', '?x=%%&silent=false', `?${ascii(10).replace(/#/g, '')}`]);
  const method = chance(0.85) ? right : pick(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD']);

  const headers: Record<string, string> = {};
  const auth = chance(0.7)
    ? `Bearer ${owner.token}`
    : pick([undefined, `Bearer ${A.token}`, `Bearer ${B.token}`, 'Bearer wrong', 'Bearer', 'Basic YTpi', `bearer ${owner.token}`, `Bearer ${'x'.repeat(3000)}`]);
  if (auth !== undefined) headers.Authorization = auth;
  const type = chance(0.85) ? 'application/json' : pick([undefined, 'text/plain', 'application/json; charset=latin1', 'application/x+json', '']);
  if (type !== undefined) headers['Content-Type'] = type;
  // Node's client sends a HEAD body unframed, which is a malformed request of its own (the raw part covers those).
  const b = method === 'POST' || (method !== 'HEAD' && chance(0.05)) ? body() : undefined;
  return { method, path, headers, body: b };
}

interface Answer {
  status: number;
  contentType?: string;
  contentLanguage?: string;
  contentLength?: string;
  text: string;
}

function send(agent: Agent, s: Spec): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${service.url}${s.path}`, { method: s.method, headers: s.headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          contentType: res.headers['content-type'],
          contentLanguage: res.headers['content-language'],
          contentLength: res.headers['content-length'],
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(s.body);
  });
}

// ---- malformed HTTP over raw sockets ----

function rawRequest(): string | Buffer {
  const line = `${pick(['GET', 'POST', 'GET'])} /api/device/${A.key}/resource/73 HTTP/1.1`;
  const headers = ['Host: 127.0.0.1', 'Connection: close'];
  const variants: (() => string | Buffer)[] = [
    () => ascii(1 + int(200)) + '\r\n\r\n',
    () => Buffer.from(Array.from({ length: 1 + int(300) }, () => int(256))),
    () => `${line}\r\n${headers.join('\r\n')}\r\n${ascii(5)}\r\n\r\n`,
    () => `${line}\r\n${headers.join('\r\n')}\r\nX-Bad${pick(['\u0000', ' ', '(', '@'])}Name: 1\r\n\r\n`,
    () => `GET /api/device/${A.key}/resource/7${pick(['\u0000', ' ', '\u007f'])}3 HTTP/1.1\r\n${headers.join('\r\n')}\r\n\r\n`,
    () => Buffer.concat([Buffer.from(`GET /api/device/${A.key}/resource/`), Buffer.from([0xc3, 0xa9, 0xff]), Buffer.from(` HTTP/1.1\r\n${headers.join('\r\n')}\r\n\r\n`)]),
    () => `${pick(['GET * HTTP/1.1', `GET http://127.0.0.1/api/device/${A.key}/resource/73 HTTP/1.1`, 'GET / HTTP/2.0', 'GET / HTTP/1.0', 'BREW /pot HTTP/1.1', 'GET'])}\r\n${headers.join('\r\n')}\r\n\r\n`,
    () => `POST /api/device/${A.key}/resource/73/feeds HTTP/1.1\r\n${headers.join('\r\n')}\r\nContent-Type: application/json\r\nAuthorization: Bearer ${A.token}\r\nContent-Length: 12\r\nContent-Length: ${pick(['12', '13', 'x'])}\r\n\r\n{"input": 1}`,
    () => `POST /api/device/${A.key}/resources/feeds HTTP/1.1\r\n${headers.join('\r\n')}\r\nContent-Type: application/json\r\nAuthorization: Bearer ${A.token}\r\nTransfer-Encoding: chunked\r\n${chance(0.5) ? 'Content-Length: 5\r\n' : ''}\r\n${pick(['zz', '5', '-1', 'ffffffffffffffffff', '2\r\n[]\r\n0'])}\r\n${chance(0.5) ? '\r\n' : ''}`,
    () => `${line}\r\n${headers.join('\r\n')}\r\nX-Long: ${'a'.repeat(17_000 + int(5000))}\r\n\r\n`,
    () => `${line}\r\n${headers.join('\r\n')}\r\n`.slice(0, int(line.length + 30)),
    () => `${line}\n${headers.join('\n')}\n\n`,
    () => `${line}\r\n${headers.join('\r\n')}\r\n${Array.from({ length: 120 }, (_, i) => `X-${i}: ${i}`).join('\r\n')}\r\n\r\n`,
  ];
  return pick(variants)();
}

async function pool<T>(items: T[], width: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await run(items[next++]);
  }));
}

describe(`fuzz (seed ${FUZZ_SEED})`, () => {
  it('answers every random request with a 4xx or a 200 in the envelope, then still answers correctly', { timeout: 60_000 }, async () => {
    const specs = Array.from({ length: HTTP_REQUESTS }, spec);
    const raws = Array.from({ length: RAW_REQUESTS }, rawRequest);
    const deadline = Date.now() + 45_000;
    const acknowledged = new Map<number, { id: number; raw: string }>();
    const statuses = new Map<number, number>();
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    const failures: string[] = [];

    await pool(specs, 8, async (s) => {
      if (Date.now() > deadline) throw new Error('fuzz ran out of time');
      const answer = await send(agent, s).catch((error: Error) => {
        throw new Error(`${s.method} ${s.path}: ${error.message}`);
      });
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const where = `${s.method} ${s.path.slice(0, 80)} → ${answer.status} ${answer.text.slice(0, 120)}`;
      if (!STATUSES.has(answer.status)) failures.push(where);
      if (answer.contentType !== 'application/json' || answer.contentLanguage !== 'en') failures.push('headers: ' + where);
      if (s.method === 'HEAD') return;
      if (Number(answer.contentLength) !== Buffer.byteLength(answer.text)) failures.push('length: ' + where);
      const envelope = JSON.parse(answer.text);
      if (envelope.success !== (answer.status === 200) || typeof envelope.message !== 'string') failures.push('envelope: ' + where);
      if (answer.status !== 200 && (envelope.payload !== null || envelope.message === '')) failures.push('failure envelope: ' + where);
      if (answer.status === 200) {
        const payload = envelope.payload;
        for (const feed of Array.isArray(payload) ? payload : [payload]) {
          if (feed !== null && 'raw_data' in feed && Object.keys(feed)[0] === 'raw_data') {
            const seen = acknowledged.get(feed.id_resource);
            if (seen === undefined || seen.id < feed.id_resource_feed) acknowledged.set(feed.id_resource, { id: feed.id_resource_feed, raw: rawData(feed.raw_data as InputValue) });
          }
        }
      }
    });
    agent.destroy();

    let unclosed = 0;
    await pool(raws, 24, async (data) => {
      if (Date.now() > deadline) throw new Error('fuzz ran out of time');
      const { responses, closed } = await exchange(service.port, data, { limitMs: 3000 });
      if (!closed) unclosed++;
      for (const r of responses) {
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        const where = `raw ${JSON.stringify(data.toString().slice(0, 80))} → ${r.status} ${r.body.slice(0, 100)}`;
        if (!STATUSES.has(r.status)) failures.push(where);
        if (r.status >= 200 && (r.headers['content-type'] !== 'application/json' || typeof JSON.parse(r.body).success !== 'boolean')) failures.push('raw envelope: ' + where);
      }
    });

    expect(failures).toEqual([]);
    expect(unclosed).toBe(0);
    expect(errorLog).not.toHaveBeenCalled();
    // The run reached the service's deeper checks, not only its front door.
    for (const status of [200, 400, 401, 404, 405, 413, 415, 422]) expect(statuses.get(status) ?? 0, `status ${status}`).toBeGreaterThan(0);
    expect(acknowledged.size).toBeGreaterThan(0);

    // Afterwards: every resource's last feed is the last one acknowledged, and the service still works.
    for (const [owner, id] of [[A, 73], [A, 74], [A, 75], [B, 80]] as const) {
      const api = device(service.url, owner.key, owner.token);
      const [last] = (await api.lastFeeds(String(id))).json.payload;
      const seen = acknowledged.get(id);
      expect(last === null ? null : { id: last.id_resource_feed, raw: last.raw_data }).toEqual(seen ?? null);
      const created = await api.createFeed(id, id === 75 ? 'off' : 1);
      expect(created.status).toBe(200);
      expect(created.json.payload.id_resource_feed).toBeGreaterThan(seen?.id ?? 0);
    }
  });
});
