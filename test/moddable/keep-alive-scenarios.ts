// The keep-alive host (platforms/moddable/host/keep-alive.ts) on the stand-ins of the ECMA-419 HTTP client and
// the classic socket under it, against the real local service: one connection for many requests, every
// way one fails with the right maybeDelivered, and a new connection after each failure or close. Run on
// Node and inside XS with scenarios.ts.
import { createAgent } from '../../src/core/agent';
import type { Host, HttpRequest, HttpResult } from '../../src/core/host/host';
import { createModdableHost } from '../../platforms/moddable/host/host';
import { equal, ok } from '../scenarios/assert';
import { counter, settle } from '../scenarios/helpers';
import { R } from '../scenarios/seed';
import type { AdapterContext, AdapterScenario, Device, DeviceOptions } from './context';
import { TIMEOUT_MS, agentConfig, createFeedsOf, failure, lastFeedsOf } from './requests';

/** A device and its keep-alive host's requests, each settled in virtual time. */
function keepAlive(ctx: AdapterContext, options?: DeviceOptions): { device: Device; send: (req: HttpRequest) => Promise<HttpResult> } {
  const device = ctx.device(options);
  const request: Host['request'] = createModdableHost(device.sdk).request;
  return { device, send: (req) => settle(device, request(req)) };
}

/** After a failure: the next request is answered, on a second connection. */
async function reconnects(ctx: AdapterContext, device: Device, send: (req: HttpRequest) => Promise<HttpResult>): Promise<void> {
  const next = await send(lastFeedsOf(ctx, [R.counterA]));
  equal(next.kind === 'response' ? next.status : next.kind, 200, 'the next request');
  equal(device.connections, 2, 'connections: the failed one, and a new one');
}

/** A failed first exchange, then a GET that must be answered on a new connection. */
async function failsThenRecovers(ctx: AdapterContext, options: DeviceOptions, req: HttpRequest): Promise<unknown> {
  const { device, send } = keepAlive(ctx, options);
  const first = failure(await send(req));
  await reconnects(ctx, device, send);
  return first;
}

export const keepAliveScenarios: AdapterScenario[] = [
  {
    name: 'keep-alive: GETs and POSTs go one after the other on one connection',
    async run(ctx) {
      const { device, send } = keepAlive(ctx);
      const statuses: unknown[] = [];
      for (let i = 0; i < 3; i++) {
        for (const req of [lastFeedsOf(ctx, [R.counterA, R.label]), createFeedsOf(ctx, [{ id_resource: R.counterA, input: i }])]) {
          const result = await send(req);
          statuses.push(result.kind === 'response' ? result.status : failure(result));
        }
      }
      equal(statuses, [200, 200, 200, 200, 200, 200], 'statuses');
      equal(device.connections, 1, 'connections');
      equal((await ctx.stored()).map((f) => f.raw_data), [0, 1, 2], 'stored values');
      return statuses;
    },
  },
  {
    name: 'keep-alive: a body over the socket\'s room streams in slices, its Content-Length in bytes',
    async run(ctx) {
      const { device, send } = keepAlive(ctx, { room: 512 });
      const labels = ['ação é já', 'snow ☃ and ice ❄', 'emoji 😀 🚀', 'plain'];
      const elements = Array.from({ length: 40 }, (_, i) => ({ id_resource: R.label, input: labels[i % 4] + ' ' + i }));
      const req = createFeedsOf(ctx, elements);
      const result = await send(req);
      equal(result.kind === 'response' ? result.status : result.kind, 200, 'status');
      const written = device.written[0];
      const bytes = written.length - written.indexOf('\r\n\r\n') - 4;
      ok(written.indexOf('Content-Length: ' + bytes + '\r\n') > 0, 'Content-Length of ' + bytes + ' bytes in the request head');
      ok(bytes > 512 && bytes > (req.body as string).length, 'a body of ' + bytes + ' bytes, more than its ' + (req.body as string).length + ' characters');
      equal((await ctx.stored()).map((f) => f.raw_data), elements.map((e) => e.input), 'stored values');
      return bytes;
    },
  },
  {
    name: 'keep-alive: a refused connection that throws from the first write (lin) delivered nothing',
    async run(ctx) {
      await ctx.down(true);
      const { send } = keepAlive(ctx, { refusal: 'throw' });
      const result = failure(await send(createFeedsOf(ctx, [{ id_resource: R.counterA, input: 1 }])));
      await ctx.down(false);
      equal(result, { kind: 'network', maybeDelivered: false, message: 'connection failed or closed: write failed' }, 'outcome');
      equal((await ctx.stored()).length, 0, 'stored feeds');
      return result;
    },
  },
  {
    name: 'keep-alive: a refused connection that ends in message -2 (lwip) delivered nothing, and the next request connects again',
    async run(ctx) {
      await ctx.down(true);
      const { device, send } = keepAlive(ctx, { refusal: 'error' });
      const first = failure(await send(createFeedsOf(ctx, [{ id_resource: R.counterA, input: 1 }])));
      await ctx.down(false);
      equal(first, { kind: 'network', maybeDelivered: false, message: 'connection failed or closed: connection failed or closed' }, 'outcome');
      await reconnects(ctx, device, send);
      return first;
    },
  },
  {
    name: 'keep-alive: a request whose last write the socket refused ("write failed") delivered nothing',
    async run(ctx) {
      const { send } = keepAlive(ctx, { failLastWrite: true });
      const result = failure(await send(createFeedsOf(ctx, [{ id_resource: R.counterA, input: 4 }])));
      equal(result, { kind: 'network', maybeDelivered: false, message: 'connection failed or closed: write failed' }, 'outcome');
      equal((await ctx.stored()).length, 0, 'stored feeds');
      return result;
    },
  },
  {
    name: 'keep-alive: a connection lost once the socket took the whole request may have delivered it',
    async run(ctx) {
      const { send } = keepAlive(ctx, { lostAfterRequest: true });
      const result = failure(await send(createFeedsOf(ctx, [{ id_resource: R.counterA, input: 3 }])));
      equal(result, { kind: 'network', maybeDelivered: true, message: 'connection failed or closed: connection failed or closed' }, 'outcome');
      return result;
    },
  },
  {
    name: 'keep-alive: an answer held past the timeout is a timeout that may have been stored; the next request connects again',
    async run(ctx) {
      await ctx.faults({ op: 'create', action: { do: 'hold', after: true } });
      const outcome = await failsThenRecovers(ctx, {}, createFeedsOf(ctx, [{ id_resource: R.counterA, input: 7 }]));
      equal(outcome, { kind: 'timeout', maybeDelivered: true, message: '' }, 'outcome');
      equal((await ctx.stored()).map((f) => f.raw_data), [7], 'stored values');
      return [outcome, TIMEOUT_MS];
    },
  },
  {
    name: 'keep-alive: a status line that is not HTTP fails the exchange, not the app; the next request connects again',
    async run(ctx) {
      await ctx.faults({ op: 'create', action: { do: 'garble' } });
      const outcome = await failsThenRecovers(ctx, {}, createFeedsOf(ctx, [{ id_resource: R.counterA, input: 1 }]));
      equal(outcome, { kind: 'network', maybeDelivered: true, message: 'connection failed or closed' }, 'outcome');
      return outcome;
    },
  },
  {
    name: 'keep-alive: an answer cut short is a failure of a request that may have been stored',
    async run(ctx) {
      await ctx.faults({ op: 'last', action: { do: 'truncate' } });
      const outcome = await failsThenRecovers(ctx, {}, lastFeedsOf(ctx, [R.counterA, R.counterB, R.label]));
      equal(outcome, { kind: 'network', maybeDelivered: true, message: 'connection closed before the answer was complete: connection closed by the server' }, 'outcome');
      return outcome;
    },
  },
  {
    name: 'keep-alive: an answer longer than the request allows is garbled: nothing held past the bound, the connection dropped',
    async run(ctx) {
      const outcome = await failsThenRecovers(ctx, {}, { ...lastFeedsOf(ctx, [R.counterA, R.counterB, R.label]), maxResponseBytes: 16 });
      equal(outcome, { kind: 'network', maybeDelivered: true, message: 'answer longer than 16 bytes (garbled): connection dropped' }, 'outcome');
      return outcome;
    },
  },
  {
    name: 'keep-alive: a 503 with a page longer than the request allows is that status: the page\'s first bytes, the connection dropped',
    async run(ctx) {
      await ctx.faults({ op: 'create', action: { do: 'page', status: 503, bytes: 65_536 } });
      const { device, send } = keepAlive(ctx);
      const result = await send({ ...createFeedsOf(ctx, [{ id_resource: R.counterA, input: 1 }]), maxResponseBytes: 1_024 });
      ok(result.kind === 'response', 'a response, not ' + JSON.stringify(failure(result)));
      const seen = [result.status, result.body.length, result.body.slice(0, 15)];
      equal(seen, [503, 1_024, '<!DOCTYPE html>'], '[status, body length, its start]');
      // The rest of the page was not read: the connection went with it.
      await reconnects(ctx, device, send);
      return seen;
    },
  },
  {
    name: 'keep-alive: the agent takes a 503 with a page longer than its bound as a 503: retried, not read back, stored once',
    async run(ctx) {
      await ctx.faults({ op: 'create', action: { do: 'page', status: 503, bytes: 65_536 } });
      const device = ctx.device();
      const agent = createAgent(createModdableHost(device.sdk, { maxAnswerBytes: 4_096 }), agentConfig(ctx, { resources: [R.counterA], uplink: { flushMs: 600_000, maxLatencyMs: 600_000 } }));
      await settle(device, agent.start());
      for (let v = 1; v <= 5; v++) agent.record(R.counterA, v);
      equal(await settle(device, agent.flush()), false, 'the first flush, answered 503');
      for (let i = 0; i < 20 && agent.stats().queued > 0; i++) await settle(device, agent.flush());
      const stats = await settle(device, agent.stop());
      const seen = [stats.sent, stats.ambiguous, stats.reconciled, stats.unresolved, stats.retries, stats.queued];
      equal(seen, [5, 0, 0, 0, 1, 0], '[sent, ambiguous, reconciled, unresolved, retries, queued]');
      equal((await ctx.stored()).map((f) => f.raw_data), [1, 2, 3, 4, 5], 'stored values');
      ok(device.trace.some((l) => l.indexOf('HTTP 503') >= 0), 'the trace says HTTP 503');
      ok(!device.trace.some((l) => l.indexOf('longer than') >= 0 || l.indexOf('outcome unknown') >= 0), 'and not a garbled answer');
      return seen;
    },
  },
  {
    name: 'keep-alive: a refusal keeps its status and Retry-After, and the connection',
    async run(ctx) {
      await ctx.faults({ op: 'create', action: { do: 'status', status: 429, retryAfter: '7' } });
      const { device, send } = keepAlive(ctx);
      const result = await send(createFeedsOf(ctx, [{ id_resource: R.counterA, input: 1 }]));
      ok(result.kind === 'response', 'a response, not ' + result.kind);
      equal([result.status, result.retryAfter], [429, '7'], '[status, Retry-After]');
      ok(typeof result.date === 'string' && result.date.endsWith(' GMT'), 'the answer\'s Date passed through');
      equal(result.location, null, 'no Location');
      await send(lastFeedsOf(ctx, [R.counterA]));
      equal(device.connections, 1, 'connections');
      return result.status;
    },
  },
  {
    name: 'keep-alive: a connection the server closed while idle is replaced, and the trace says so once',
    async run(ctx) {
      const { device, send } = keepAlive(ctx);
      await send(lastFeedsOf(ctx, [R.counterA]));
      await ctx.closeIdle();
      await device.clock.advance(0);
      const result = await send(createFeedsOf(ctx, [{ id_resource: R.counterA, input: 5 }]));
      equal(result.kind === 'response' ? result.status : failure(result), 200, 'the request after the close');
      equal(device.connections, 2, 'connections');
      const lines = device.trace.filter((l) => l.indexOf('info: link: ') >= 0);
      equal(lines.length, 1, 'trace lines about the link: ' + lines.join(''));
      ok(lines[0].indexOf('ended after 1 answer (connection closed by the server)') >= 0, 'the line says why: ' + lines[0]);
      return lines.length;
    },
  },
  {
    name: 'keep-alive: a POST written on a connection the server had closed may have been delivered; the next connects again',
    async run(ctx) {
      const { device, send } = keepAlive(ctx);
      await send(lastFeedsOf(ctx, [R.counterA]));
      // The device has not heard of the close when it writes: the socket takes the request.
      await ctx.closeIdle(false);
      const result = failure(await send(createFeedsOf(ctx, [{ id_resource: R.counterA, input: 9 }])));
      equal(result, { kind: 'network', maybeDelivered: true, message: 'connection failed or closed: connection closed by the server' }, 'outcome');
      await reconnects(ctx, device, send);
      return result;
    },
  },
  {
    name: 'agent: on the keep-alive host a service restart loses nothing and stores nothing twice',
    async run(ctx) {
      const device = ctx.device();
      const a = counter(R.counterA, 1_000);
      const agent = createAgent(createModdableHost(device.sdk), agentConfig(ctx, { sensors: [a.sensor], uplink: { flushMs: 2_000, backoffBaseMs: 500, backoffCapMs: 1_000 } }));
      await settle(device, agent.start());
      await device.clock.advance(5_000);
      // The service stops: the open connection dies with it, and new ones are refused for a while.
      await ctx.down(true);
      await device.clock.advance(4_000);
      await ctx.down(false);
      await device.clock.advance(6_000);
      await settle(device, agent.stop());
      const stored = (await ctx.stored()).filter((f) => f.id_resource === R.counterA).map((f) => f.raw_data);
      equal(stored, a.readings, 'stored readings, once each, in order');
      // What happened, once each: the connection that ended, the flushes that began to fail while it was
      // down, and their recovery.
      const said = (what: string): number => device.trace.filter((l) => l.indexOf(what) >= 0).length;
      equal([said('info: link: '), said('warn: uplink: failing: network error on POST'), said('info: uplink: recovered after ')], [1, 1, 1], 'trace lines about the link and the failed flushes: ' + device.trace.join(''));
      return [stored.length, device.connections > 1];
    },
  },
];
