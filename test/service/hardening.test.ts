// The service against hostile or broken clients: bodies refused while they stream in, slow and idle
// connections cut, malformed HTTP answered with the envelope, aborted uploads leaving nothing behind.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService } from '../../src/service';
import type { RunningService } from '../../src/service';
import { device } from '../support/client';
import { exchange } from './raw';
import type { RawResponse } from './raw';
import { A, SEED } from './fixtures';

let service: RunningService;
let a: ReturnType<typeof device>;
const LIMIT = 64 * 1024;

beforeAll(async () => {
  service = await startService({
    seed: SEED,
    limits: { maxBodyBytes: LIMIT },
    timeouts: { headersMs: 300, requestMs: 600, keepAliveMs: 300, idleMs: 2000 },
  });
  a = device(service.url, A.key, A.token);
});
afterAll(() => service.close());

function expectEnvelope(response: RawResponse, status: number, message: RegExp): void {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toBe('application/json');
  expect(response.headers['content-language']).toBe('en');
  expect(Number(response.headers['content-length'])).toBe(Buffer.byteLength(response.body));
  const envelope = JSON.parse(response.body);
  expect(envelope).toEqual({ success: false, payload: null, message: expect.stringMatching(message) });
}

const head = (method: string, path: string, headers: string[]) =>
  [`${method} /api/device/${A.key}${path} HTTP/1.1`, 'Host: 127.0.0.1', ...headers, '', ''].join('\r\n');

async function stillServes(): Promise<void> {
  expect((await a.getResource(73)).status).toBe(200);
}

describe('request bodies', () => {
  it('refuses a huge chunked body with 413 while it streams in, long before it is all sent', async () => {
    const chunk = Buffer.alloc(16 * 1024, 0x20);
    const { status, sent } = await new Promise<{ status: number; sent: number }>((resolve, reject) => {
      let sent = 0;
      let answered = false;
      const req = httpRequest(`${a.root}/resources/feeds`, {
        method: 'POST',
        agent: false,
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${A.token}`, 'Transfer-Encoding': 'chunked' },
      });
      req.on('response', (res) => {
        answered = true;
        res.resume();
        resolve({ status: res.statusCode ?? 0, sent });
      });
      req.on('error', (error) => (answered ? undefined : reject(error)));
      // Up to 64 MiB, a thousand times the limit; the answer must come long before.
      const pump = () => {
        while (!answered && sent < 64 * 1024 * 1024) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        if (!answered) req.end();
      };
      pump();
    });
    expect(status).toBe(413);
    expect(sent).toBeLessThan(16 * 1024 * 1024);
    await stillServes();
  });

  it('refuses by Content-Length before inviting the body of a client that expects 100 Continue', async () => {
    const { responses, closed } = await exchange(
      service.port,
      head('POST', '/resources/feeds', ['Content-Type: application/json', `Authorization: Bearer ${A.token}`, 'Content-Length: 50000000', 'Expect: 100-continue']),
    );
    expect(responses).toHaveLength(1);
    expectEnvelope(responses[0], 413, /larger than the limit of 65536 bytes/);
    expect(responses[0].headers.connection).toBe('close');
    expect(closed).toBe(true);
  });

  it('invites the body with 100 Continue once the request is acceptable', async () => {
    const body = JSON.stringify({ input: 1 });
    const { responses } = await exchange(
      service.port,
      [
        head('POST', '/resource/73/feeds', ['Content-Type: application/json', `Authorization: Bearer ${A.token}`, `Content-Length: ${body.length}`, 'Expect: 100-continue', 'Connection: close']),
        body,
      ],
      { gapMs: 100 },
    );
    expect(responses.map((r) => r.status)).toEqual([100, 200]);
  });

  it('a refused request whose body was never read closes its connection instead of reading on', async () => {
    const { responses, closed } = await exchange(service.port, [
      head('POST', '/resource/73/feeds', ['Content-Type: application/json', 'Authorization: Bearer wrong', 'Content-Length: 1000']),
      'x'.repeat(10),
    ]);
    expectEnvelope(responses[0], 401, /token is not this device's/);
    expect(closed).toBe(true);
  });

  it('an upload the client abandons midway stores nothing and breaks nothing', async () => {
    const before = (await a.lastFeeds('74')).json.payload;
    const body = JSON.stringify([{ id_resource: 74, input: 12 }]);
    const { responses } = await exchange(
      service.port,
      head('POST', '/resources/feeds', ['Content-Type: application/json', `Authorization: Bearer ${A.token}`, `Content-Length: ${body.length}`]) + body.slice(0, 10),
      { limitMs: 200 },
    );
    expect(responses).toEqual([]);
    expect((await a.lastFeeds('74')).json.payload).toEqual(before);
    await stillServes();
  });
});

describe('slow, idle and malformed connections', () => {
  it('answers 408 and closes when the headers do not arrive in time', async () => {
    const { responses, closed } = await exchange(service.port, `GET /api/device/${A.key}/resource/73 HTTP/1.1\r\nHost: x\r\n`, { limitMs: 5000 });
    expect(closed).toBe(true);
    expectEnvelope(responses[0], 408, /did not arrive in time/);
  });

  it('answers 408 and closes when a body stalls', async () => {
    const { responses, closed } = await exchange(
      service.port,
      head('POST', '/resource/73/feeds', ['Content-Type: application/json', `Authorization: Bearer ${A.token}`, 'Content-Length: 100']) + '{"in',
      { limitMs: 5000 },
    );
    expect(closed).toBe(true);
    expect(responses[0].status).toBe(408);
  });

  it('closes an idle keep-alive connection', async () => {
    const { responses, closed } = await exchange(service.port, head('GET', '/resource/73', []), { limitMs: 5000 });
    expect(responses.map((r) => r.status)).toEqual([200]);
    expect(closed).toBe(true);
  });

  it('answers pipelined requests in order on one connection', async () => {
    const { responses } = await exchange(service.port, head('GET', '/resource/73', []) + head('GET', '/resource/99', []) + head('GET', '/resources/74,73', ['Connection: close']));
    expect(responses.map((r) => r.status)).toEqual([200, 404, 200]);
    expect(JSON.parse(responses[2].body).payload.map((r: { id_resource: number }) => r.id_resource)).toEqual([74, 73]);
  });

  it('answers malformed HTTP with 400 and the envelope, and oversized headers with 431', async () => {
    for (const garbage of ['GARBAGE\r\n\r\n', 'GET / HTTP/9.9\r\n\r\n', `GET /api HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n`, 'GET /api HTTP/1.1\r\nBad Header\r\n\r\n', 'POST /api HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n']) {
      const { responses, closed } = await exchange(service.port, garbage);
      expectEnvelope(responses[0], 400, /not valid HTTP/);
      expect(closed).toBe(true);
    }
    const { responses } = await exchange(service.port, head('GET', '/resource/73', [`X-Filler: ${'a'.repeat(20_000)}`]));
    expectEnvelope(responses[0], 431, /headers are larger than the limit/);
    await stillServes();
  });
});
