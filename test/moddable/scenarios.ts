// The Moddable adapter on stand-ins for the SDK (./context.ts), against the real local service: written
// once, run on Node (adapter.node.test.ts) and inside the XS worker's device realm (test/xs). Each
// resolves with what it saw, which must be the same on both engines. The classic host's exchanges are
// here ('http: …'), the keep-alive host's in keep-alive-scenarios.ts.
import { createAgent } from '../../src/core/agent';
import { createTimers } from '../../platforms/moddable/host/clock';
import { openFlashQueue } from '../../platforms/moddable/storage/flash-queue';
import { AnswerBody } from '../../platforms/moddable/host/answer-body';
import { createModdableHost } from '../../platforms/moddable/host/host';
import { createHttp } from '../../platforms/moddable/host/http';
import type { Host, HttpRequest, HttpResult } from '../../src/core/host/host';
import { equal, ok } from '../scenarios/assert';
import { counter, settle } from '../scenarios/helpers';
import { R } from '../scenarios/seed';
import type { AdapterContext, AdapterScenario, Device } from './context';
import { keepAliveScenarios } from './keep-alive-scenarios';
import { TIMEOUT_MS, agentConfig, createFeedsOf, failure, lastFeedsOf } from './requests';
import { utf8Bytes } from './standins/bytes';

/** Where the agent scenarios keep their flash queue, and a wall clock as SNTP would set it (24 Nov 2026). */
const BACKLOG = '/feed-agent.q';
const WALL_AT_0 = 1795478400000;

/** The flash queue's files on the disk. */
function backlogFiles(ctx: AdapterContext): string[] {
  const names: string[] = [];
  const entries = new ctx.files.Iterator('/');
  for (let e = entries.next(); e !== undefined; e = entries.next()) if (e.name.indexOf('feed-agent.q') === 0) names.push(e.name);
  return names;
}

/** The ages (`age_ms`) of the elements `device` sent, in the order sent. */
function agesSent(device: Device): number[] {
  const ages: number[] = [];
  for (const request of device.written) {
    for (let at = request.indexOf('"age_ms":'); at >= 0; at = request.indexOf('"age_ms":', at + 1)) ages.push(parseInt(request.slice(at + 9), 10));
  }
  return ages;
}

/** One exchange through the classic host's HTTP, with the device's virtual time moving until it settles. */
function exchange(device: Device, req: HttpRequest): Promise<HttpResult> {
  return settle(device, createHttp(device.sdk)(req));
}

export const adapterScenarios: AdapterScenario[] = [
  {
    name: 'http: a GET is answered and its body decoded',
    async run(ctx) {
      const result = await exchange(ctx.device(), lastFeedsOf(ctx, [R.counterA, R.label]));
      ok(result.kind === 'response', 'a response, not ' + result.kind);
      equal(result.status, 200, 'status');
      const envelope = JSON.parse(result.body) as { success: boolean; payload: unknown[] };
      equal([envelope.success, envelope.payload.length], [true, 2], '[success, payload length]');
      return result.status;
    },
  },
  {
    name: 'http: a body over the socket\'s room streams in fragments, its Content-Length in bytes',
    async run(ctx) {
      const device = ctx.device({ room: 512 });
      // Non-ASCII text: 2 to 4 bytes a character, which a length in characters would get wrong.
      const labels = ['ação é já', 'snow ☃ and ice ❄', 'emoji 😀 🚀', 'plain'];
      const elements = Array.from({ length: 40 }, (_, i) => ({ id_resource: R.label, input: labels[i % 4] + ' ' + i }));
      const req = createFeedsOf(ctx, elements);
      const result = await exchange(device, req);
      equal(result.kind === 'response' ? result.status : result.kind, 200, 'status');
      const written = device.written[0];
      const bytes = written.length - written.indexOf('\r\n\r\n') - 4;
      ok(written.indexOf('Content-Length: ' + bytes + '\r\n') > 0, 'Content-Length of ' + bytes + ' bytes in the request head');
      ok(bytes > 512 && bytes > (req.body as string).length, 'a body of ' + bytes + ' bytes, more than its ' + (req.body as string).length + ' characters');
      const stored = (await ctx.stored()).map((f) => f.raw_data);
      equal(stored, elements.map((e) => e.input), 'stored values');
      return bytes;
    },
  },
  {
    name: 'http: a refused connection that throws from the socket (lin) delivered nothing, and the app lives',
    async run(ctx) {
      await ctx.down(true);
      const result = await exchange(ctx.device({ refusal: 'throw' }), lastFeedsOf(ctx, [R.counterA]));
      await ctx.down(false);
      equal(failure(result), { kind: 'network', maybeDelivered: false, message: 'write failed' }, 'outcome');
      return failure(result);
    },
  },
  {
    name: 'http: a refused connection that ends in message -2 (lwip) delivered nothing',
    async run(ctx) {
      await ctx.down(true);
      const result = await exchange(ctx.device({ refusal: 'error' }), createFeedsOf(ctx, [{ id_resource: R.counterA, input: 1 }]));
      await ctx.down(false);
      equal(failure(result), { kind: 'network', maybeDelivered: false, message: 'connection failed or closed' }, 'outcome');
      equal((await ctx.stored()).length, 0, 'stored feeds');
      return failure(result);
    },
  },
  {
    name: 'http: a connection lost once the whole body was written may have delivered it',
    async run(ctx) {
      // One fragment holds the whole body: http.js writes it as soon as the adapter returns it.
      const result = await exchange(ctx.device({ lostAfterBody: true }), createFeedsOf(ctx, [{ id_resource: R.counterA, input: 3 }]));
      equal(failure(result), { kind: 'network', maybeDelivered: true, message: 'connection failed or closed' }, 'outcome');
      return failure(result);
    },
  },
  {
    name: 'http: a last fragment the socket refused ("write failed") delivered nothing',
    async run(ctx) {
      const result = await exchange(ctx.device({ failLastWrite: true }), createFeedsOf(ctx, [{ id_resource: R.counterA, input: 4 }]));
      equal(failure(result), { kind: 'network', maybeDelivered: false, message: 'write failed' }, 'outcome');
      equal((await ctx.stored()).length, 0, 'stored feeds');
      return failure(result);
    },
  },
  {
    name: 'http: an answer held past the timeout is a timeout of a request that may have been stored',
    async run(ctx) {
      await ctx.faults({ op: 'create', action: { do: 'hold', after: true } });
      const device = ctx.device();
      const result = await exchange(device, createFeedsOf(ctx, [{ id_resource: R.counterA, input: 7 }]));
      equal(failure(result), { kind: 'timeout', maybeDelivered: true, message: '' }, 'outcome');
      equal(device.clock.now(), TIMEOUT_MS, 'virtual time when it gave up');
      equal((await ctx.stored()).map((f) => f.raw_data), [7], 'stored values');
      return failure(result);
    },
  },
  {
    name: 'http: a status line that is not HTTP fails the exchange, not the app',
    async run(ctx) {
      await ctx.faults({ op: 'create', action: { do: 'garble' } });
      const result = await exchange(ctx.device(), createFeedsOf(ctx, [{ id_resource: R.counterA, input: 1 }]));
      equal(failure(result), { kind: 'network', maybeDelivered: true, message: 'unexpected status format' }, 'outcome');
      return failure(result);
    },
  },
  {
    name: 'http: an answer cut short is a failure of a request that may have been stored',
    async run(ctx) {
      await ctx.faults({ op: 'last', action: { do: 'truncate' } });
      const result = await exchange(ctx.device(), lastFeedsOf(ctx, [R.counterA, R.counterB, R.label]));
      equal(failure(result), { kind: 'network', maybeDelivered: true, message: 'connection closed before the answer was complete' }, 'outcome');
      return failure(result);
    },
  },
  {
    name: 'http: an answer longer than the request allows is garbled: nothing held past the bound, the request closed',
    async run(ctx) {
      const result = await exchange(ctx.device(), { ...lastFeedsOf(ctx, [R.counterA, R.counterB, R.label]), maxResponseBytes: 16 });
      equal(failure(result), { kind: 'network', maybeDelivered: true, message: 'answer longer than 16 bytes (garbled): connection dropped' }, 'outcome');
      return failure(result);
    },
  },
  ...[true, false].map((length): AdapterScenario => ({
    name: 'http: a 503 with a page longer than the request allows ' + (length ? '(its Content-Length says so) ' : '(chunked) ') + 'is that status: the page\'s first bytes, the request closed',
    async run(ctx) {
      await ctx.faults({ op: 'create', action: { do: 'page', status: 503, bytes: 65_536, length } });
      const result = await exchange(ctx.device(), { ...createFeedsOf(ctx, [{ id_resource: R.counterA, input: 1 }]), maxResponseBytes: 1_024 });
      ok(result.kind === 'response', 'a response, not ' + JSON.stringify(failure(result)));
      const seen = [result.status, result.body.length, result.body.slice(0, 15)];
      equal(seen, [503, 1_024, '<!DOCTYPE html>'], '[status, body length, its start]');
      equal((await ctx.stored()).length, 0, 'stored feeds');
      return seen;
    },
  })),
  {
    name: 'answer body: a failure\'s first bytes end before a character the bound cut in two, and decode',
    async run(ctx) {
      const device = ctx.device();
      const seen: string[] = [];
      // 'abcd' then '€' (3 bytes) or '😀' (4 bytes), cut after each of their bytes by a bound of 5 to 8.
      for (const text of ['abcd€', 'abcd😀']) {
        const bytes = utf8Bytes(text);
        for (let bound = 5; bound < bytes.byteLength; bound++) {
          const body = new AnswerBody(16);
          body.begin(bound);
          body.add(bytes.slice(0, bound));
          const { bytes: kept, length } = body.takePrefix();
          seen.push(device.sdk.decode(kept, length));
        }
      }
      equal(seen, ['abcd', 'abcd', 'abcd', 'abcd', 'abcd'], 'what each prefix decodes to');
      return seen;
    },
  },
  {
    name: 'http: requests made at once are answered in turn, each read into the host\'s one body and decoded whole',
    async run(ctx) {
      const device = ctx.device();
      const request = createHttp(device.sdk);
      const three = [R.counterA, R.counterB, R.label];
      const results = await settle(device, Promise.all([
        request({ ...lastFeedsOf(ctx, three), maxResponseBytes: 16 }),
        request(lastFeedsOf(ctx, [R.counterA])),
        request(lastFeedsOf(ctx, three)),
      ]));
      const seen = results.map((r) => (r.kind === 'response' ? (JSON.parse(r.body) as { payload: unknown[] }).payload.length : r.kind));
      equal(seen, ['network', 1, 3], 'each answer, in order: garbled, 1 record, 3 records');
      return seen;
    },
  },
  {
    name: 'http: a refusal keeps its status and Retry-After',
    async run(ctx) {
      await ctx.faults({ op: 'create', action: { do: 'status', status: 429, retryAfter: '7' } });
      const result = await exchange(ctx.device(), createFeedsOf(ctx, [{ id_resource: R.counterA, input: 1 }]));
      ok(result.kind === 'response', 'a response, not ' + result.kind);
      equal([result.status, result.retryAfter], [429, '7'], '[status, Retry-After]');
      ok(typeof result.date === 'string' && result.date.endsWith(' GMT'), 'the answer\'s Date passed through');
      equal(result.location, null, 'no Location');
      return result.status;
    },
  },
  {
    name: 'host: the clock crosses the tick counter\'s rollover without going back, and long waits are chained',
    async run(ctx) {
      // Time.ticks starts 3 s short of 2^31: it turns negative 3 s in.
      const device = ctx.device({ ticksAt0: 2 ** 31 - 3_000 });
      const host = createModdableHost(device.sdk);
      const seen: number[] = [];
      for (let i = 0; i < 10; i++) {
        seen.push(host.now());
        await device.clock.advance(1_000);
      }
      equal(seen, [0, 1_000, 2_000, 3_000, 4_000, 5_000, 6_000, 7_000, 8_000, 9_000], 'host.now() each second');
      const timers = createTimers(device.sdk.Timer);
      const fired: number[] = [];
      const start = device.clock.now();
      timers.setTimer(2 ** 31 + 5_000, () => fired.push(device.clock.now() - start));
      const cancelled = timers.setTimer(2 ** 31 + 6_000, () => fired.push(-1));
      await device.clock.advance(2 ** 31 + 5_500);
      timers.clearTimer(cancelled);
      await device.clock.advance(1_000);
      equal(fired, [2 ** 31 + 5_000], 'a wait of 2^31 + 5 s fired once, on time; the cleared one never');
      equal(device.clock.pending, 0, 'timers left');
      return seen;
    },
  },
  {
    name: 'agent: on the Moddable host (keep-alive by default) it delivers every reading in order and runs each command once',
    async run(ctx) {
      const device = ctx.device({ ticksAt0: 2 ** 31 - 10_000 });
      const a = counter(R.counterA, 1_000);
      const commands: unknown[] = [];
      const agent = createAgent(
        createModdableHost(device.sdk),
        agentConfig(ctx, { sensors: [a.sensor], actuators: [{ resource: R.relay, every: 2_000, handle: (value) => void commands.push(value) }], uplink: { flushMs: 5_000 } }),
      );
      await settle(device, agent.start());
      await device.clock.advance(6_000);
      await ctx.create(device.clock.now(), R.relay, 1);
      await device.clock.advance(14_000);
      await settle(device, agent.stop());
      const stored = (await ctx.stored()).filter((f) => f.id_resource === R.counterA).map((f) => f.raw_data);
      equal(stored, a.readings, 'stored readings, in order');
      equal(commands, [true], 'commands handled');
      equal(device.connections, 1, 'connections opened for every request');
      equal(device.clock.pending, 0, 'timers left after stop');
      ok(device.trace.join('').indexOf(ctx.token) < 0, 'the token never in the trace');
      return [stored.length, commands];
    },
  },
  {
    name: 'agent: an outage longer than the queue in memory goes to the flash queue and arrives whole, in order, once the service is back',
    async run(ctx) {
      const device = ctx.device();
      const a = counter(R.counterA, 1_000);
      let host: Host | null = null;
      const storage = openFlashQueue(ctx.files, { path: BACKLOG, spillEvery: 4, now: () => (host as Host).now() });
      host = createModdableHost(device.sdk, { storage });
      const agent = createAgent(host, agentConfig(ctx, { sensors: [a.sensor], uplink: { queue: 16, batch: 10, flushMs: 2_000, backoffBaseMs: 1_000, backoffCapMs: 4_000, sendAge: true } }));
      await settle(device, agent.start());
      await device.clock.advance(3_000);
      equal(backlogFiles(ctx), [], 'backlog files while the service answers');
      await ctx.down(true);
      await device.clock.advance(100_000);
      const during = agent.stats();
      ok(during.backlog > 50, during.backlog + ' samples beyond the 16 in memory');
      equal(during.droppedOverflow, 0, 'dropped during the outage');
      await ctx.down(false);
      await device.clock.advance(30_000);
      await settle(device, agent.stop());
      const stored = (await ctx.stored()).map((f) => Number(f.raw_data));
      equal(stored, a.readings, 'stored readings, in order, each once');
      // Read back in the same boot, every sample kept its time: an age was sent for each.
      equal(agent.stats().undated, 0, 'undated samples');
      equal(agesSent(device).length, a.readings.length, 'ages sent');
      equal(backlogFiles(ctx), [], 'backlog files once everything in them was delivered');
      return stored.length;
    },
  },
  {
    name: 'agent: a device that dies in an outage delivers its flash queue after reboot, each sample with its age where the wall clock was known',
    async run(ctx) {
      const first = ctx.device();
      const a = counter(R.counterA, 1_000);
      let host: Host | null = null;
      // One wall clock for both boots, as SNTP gives them: 2026 at virtual time 0.
      const wall = (device: Device) => () => WALL_AT_0 + device.clock.now();
      const storage = openFlashQueue(ctx.files, { path: BACKLOG, spillEvery: 4, now: () => (host as Host).now(), wall: wall(first) });
      host = createModdableHost(first.sdk, { storage });
      const agent = createAgent(host, agentConfig(ctx, { sensors: [a.sensor], uplink: { queue: 16, flushMs: 2_000, backoffBaseMs: 1_000, backoffCapMs: 2_000 } }));
      await settle(first, agent.start());
      await first.clock.advance(3_000);
      await ctx.down(true);
      await first.clock.advance(40_000);
      ok(backlogFiles(ctx).length > 0, 'backlog files once the outage began');
      // The first device dies here: its clock never moves again. The second boots on the same flash.
      await ctx.down(false);
      const bootAt = first.clock.now() + 1_000;
      const second = ctx.device({ bootAt });
      let again: Host | null = null;
      const reopened = openFlashQueue(ctx.files, { path: BACKLOG, spillEvery: 4, now: () => (again as Host).now(), wall: wall(second) });
      again = createModdableHost(second.sdk, { storage: reopened });
      const reborn = createAgent(again, agentConfig(ctx, { resources: [R.counterA], uplink: { queue: 16, flushMs: 2_000, sendAge: true } }));
      await settle(second, reborn.start());
      await settle(second, reborn.flush());
      const { sent, undated } = await settle(second, reborn.stop());
      const stored = (await ctx.stored()).map((f) => Number(f.raw_data));
      // Every reading up to the last burst arrived once, in order; those after it died with the RAM.
      equal(stored, a.readings.slice(0, stored.length), 'stored readings');
      ok(a.readings.length - stored.length < 4, (a.readings.length - stored.length) + ' readings lost, fewer than one burst');
      ok(sent > 16, sent + ' samples restored and sent, more than the 16 in memory');
      equal(undated, 0, 'undated samples');
      // The first reading of the outage was taken at about 4 s of the first boot, and sent after the second began.
      const ages = agesSent(second);
      equal(ages.length, sent, 'ages sent, one per restored sample');
      ok(ages[0] >= bootAt - 4_000 && ages[0] <= bootAt + 10_000, 'the first restored sample\'s age, ' + ages[0] + ' ms, is its age on the first boot\'s clock');
      equal(backlogFiles(ctx), [], 'backlog files once everything in them was delivered');
      return stored.length;
    },
  },
  ...keepAliveScenarios,
];
