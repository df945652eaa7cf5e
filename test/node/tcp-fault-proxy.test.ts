// The TCP fault proxy and the loopback DNS server (test/support), as the Node host meets them: each mode
// does what it says to a real request, and is counted in its window; the host's result for each is the
// one the core must be told (kind, maybeDelivered), within the request's deadline.
import { createServer } from 'node:http';
import type { Server } from 'node:net';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';

import type { HttpRequest } from '../../src/core/host/host';
import { createHttp } from '../../platforms/node/host/http';
import { LoopbackDns, lookupVia } from '../support/loopback-dns';
import { TcpFaultProxy } from '../support/tcp-fault-proxy';
import { listen, shut } from './support/listen';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A service that answers every request with its method and path, and a proxy in front of it. */
async function proxied(): Promise<TcpFaultProxy> {
  const server: Server = createServer((req, res) => {
    req.resume().on('end', () => res.end(JSON.stringify({ method: req.method, path: req.url })));
  });
  const address = await listen(server);
  closers.push(() => shut(server));
  const proxy = await TcpFaultProxy.start('http://' + address);
  closers.push(() => proxy.close());
  return proxy;
}

const request = createHttp();
const WRITE = '/api/device/K/resources/feeds';
const READ = '/api/device/K/resources/301/feeds/last';

function req(method: 'GET' | 'POST', url: string, timeoutMs = 2_000): HttpRequest {
  return { method, url, headers: {}, body: method === 'POST' ? '[]' : undefined, timeoutMs, maxResponseBytes: 65_536 };
}

describe('TcpFaultProxy', () => {
  it('passes requests and counts them, with the service\'s status, in the window of its mode', async () => {
    const proxy = await proxied();
    expect(await request(req('POST', proxy.url() + WRITE))).toMatchObject({ kind: 'response', status: 200, body: JSON.stringify({ method: 'POST', path: WRITE }) });
    expect(await request(req('GET', proxy.url() + READ))).toMatchObject({ kind: 'response', status: 200 });
    expect(proxy.windows).toHaveLength(1);
    expect(proxy.windows[0].requests.map((r) => [r.method, r.path, r.status])).toEqual([
      ['POST', WRITE, 200],
      ['GET', READ, 200],
    ]);
  });

  it('accept-close: closed before a byte, at once', async () => {
    const proxy = await proxied();
    await proxy.set('accept-close');
    expect(await request(req('GET', proxy.url() + READ))).toMatchObject({ kind: 'network', maybeDelivered: true });
    expect(proxy.windows[1]).toMatchObject({ mode: 'accept-close', requests: [] });
    expect(proxy.windows[1].connections.length).toBeGreaterThan(0);
  });

  it('reset-writes: a POST …/feeds is reset once it is in, and never reaches the service; a read is answered', async () => {
    const proxy = await proxied();
    await proxy.set('reset-writes');
    expect(await request(req('POST', proxy.url() + WRITE))).toMatchObject({ kind: 'network', maybeDelivered: true });
    expect(await request(req('GET', proxy.url() + READ))).toMatchObject({ kind: 'response', status: 200 });
    expect(proxy.windows[1].requests.map((r) => [r.method, r.status])).toEqual([
      ['POST', undefined],
      ['GET', 200],
    ]);
  });

  it('reset-all: every request is reset once it is in', async () => {
    const proxy = await proxied();
    await proxy.set('reset-all');
    expect(await request(req('GET', proxy.url() + READ))).toMatchObject({ kind: 'network', maybeDelivered: true });
    expect(proxy.windows[1].requests).toHaveLength(1);
  });

  it('blackhole: read, never answered: the request times out by its deadline', async () => {
    const proxy = await proxied();
    await proxy.set('blackhole');
    expect(await request(req('POST', proxy.url() + WRITE, 300))).toEqual({ kind: 'timeout', maybeDelivered: true });
    expect(proxy.windows[1].requests.map((r) => r.method + ' ' + r.path)).toEqual(['POST ' + WRITE]);
  });

  it('stall: the answer\'s headers and half its body come, then nothing', async () => {
    const proxy = await proxied();
    await proxy.set('stall');
    expect(await request(req('GET', proxy.url() + READ, 300))).toEqual({ kind: 'timeout', maybeDelivered: true });
    expect(proxy.windows[1].requests[0].status).toBe(200);
  });

  it('refuse: connections are refused, and the same port listens again when it ends', async () => {
    const proxy = await proxied();
    await proxy.set('refuse');
    expect(await request(req('GET', proxy.url() + READ))).toMatchObject({ kind: 'network', maybeDelivered: false });
    await proxy.set('pass');
    expect(await request(req('GET', proxy.url() + READ))).toMatchObject({ kind: 'response', status: 200 });
  });

  it('tls-stall: the ClientHello is read and never answered', async () => {
    const proxy = await proxied();
    await proxy.set('tls-stall');
    expect(await request(req('GET', proxy.url('https') + READ, 300))).toEqual({ kind: 'timeout', maybeDelivered: false });
    expect(proxy.windows[1].clientHellos).toHaveLength(1);
  });

  it('a fault destroys the connection kept open, which would otherwise go on working through it', async () => {
    const proxy = await proxied();
    expect(await request(req('GET', proxy.url() + READ))).toMatchObject({ status: 200 });
    await proxy.set('blackhole');
    // The kept-alive socket is gone: the next request opens a connection, held by the blackhole.
    expect((await request(req('GET', proxy.url() + READ, 300))).kind).not.toBe('response');
    await proxy.set('pass');
    expect(await request(req('GET', proxy.url() + READ))).toMatchObject({ status: 200 });
  });
});

describe('LoopbackDns', () => {
  it('resolves its one name to 127.0.0.1, then not at all while told so, asked alone', async () => {
    const proxy = await proxied();
    const dns = await LoopbackDns.start('feed-service.invalid');
    closers.push(() => dns.close());
    const dispatcher = new Agent({ connect: { lookup: lookupVia(dns.server) } });
    closers.push(() => dispatcher.destroy());
    const named = createHttp({ dispatcher });
    const url = `http://feed-service.invalid:${proxy.port}${READ}`;
    expect(await named(req('GET', url))).toMatchObject({ kind: 'response', status: 200 });
    dns.resolvable = false;
    proxy.dropConnections();
    const failed = await named(req('GET', url));
    expect(failed).toMatchObject({ kind: 'network', maybeDelivered: false });
    expect((failed as { message: string }).message).toContain('ENOTFOUND');
    expect(dns.queries.map((q) => [q.name, q.type, q.rcode])).toEqual([
      ['feed-service.invalid', 1, 0],
      ['feed-service.invalid', 1, 3],
    ]);
  });
});
