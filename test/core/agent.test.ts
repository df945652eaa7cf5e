// The agent on a fake host and a virtual clock: every flush trigger, every failure class, isolation,
// overflow, auth pause, commands, start-up, presence, and a seeded property test over failure schedules.
import { describe, expect, it } from 'vitest';
import { createAgent } from '../../src/core/agent';
import type { Agent } from '../../src/core/agent';
import type { AgentConfig, UplinkConfig } from '../../src/core/config';
import { ConfigError } from '../../src/core/config';
import type { Host, QueueStorage, SampleValue } from '../../src/core/host/host';
import { FakeService } from '../support/fake-service';
import type { FakeResource } from '../support/fake-service';
import { fakeAgent, newClock } from '../support/fake-agent';
import type { FakeAgentOptions } from '../support/fake-agent';
import type { VirtualClock } from '../support/virtual-clock';
import { memoryBacklog } from '../support/memory-backlog';

const RESOURCES: FakeResource[] = [
  { id: 1, begin: 0, end: 1_000_000 },
  { id: 2, begin: 0, end: 1_000_000 },
  { id: 3, begin: 0, end: 100 },
  { id: 4, regex: 'on|off' },
  { id: 5, begin: 0, end: 1 },
];

function setup(config: Partial<AgentConfig> = {}, uplink: Partial<UplinkConfig> = {}, options: FakeAgentOptions = {}) {
  return fakeAgent(RESOURCES, { sensors: [], resources: RESOURCES.map((r) => r.id), ...config }, { flushMs: 60_000, maxLatencyMs: 60_000, batch: 100, ...uplink }, options);
}

function posts(service: FakeService) {
  return service.requests.filter((r) => r.method === 'POST');
}

function fill(agent: Agent, n: number, resource = 1, from = 0): void {
  for (let i = 0; i < n; i++) expect(agent.record(resource, from + i)).toBe('queued');
}

describe('flush triggers', () => {
  it('sends at once when a batch is full', async () => {
    const { agent, service, clock } = setup({}, { batch: 10 });
    await agent.start();
    fill(agent, 9);
    await clock.advance(0);
    expect(posts(service)).toHaveLength(0);
    agent.record(1, 9);
    await clock.advance(0);
    expect(posts(service).map((r) => r.elements)).toEqual([10]);
    expect(service.stored(1)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('sends every flush interval', async () => {
    const { agent, service, clock } = setup({}, { flushMs: 1_000 });
    await agent.start();
    fill(agent, 3);
    await clock.advance(999);
    expect(posts(service)).toHaveLength(0);
    await clock.advance(1);
    expect(posts(service)).toHaveLength(1);
    expect(posts(service)[0].at).toBe(1_000);
  });

  it('sends when the oldest sample reaches the maximum latency', async () => {
    const { agent, service, clock } = setup({}, { maxLatencyMs: 500 });
    await agent.start();
    await clock.advance(200);
    fill(agent, 1);
    await clock.advance(100);
    fill(agent, 1, 1, 1);
    await clock.advance(399);
    expect(posts(service)).toHaveLength(0);
    await clock.advance(1);
    expect(posts(service).map((r) => [r.at, r.elements])).toEqual([[700, 2]]);
  });

  it('flush() sends what is queued and says whether it all left', async () => {
    const { agent, service, clock } = setup();
    await agent.start();
    expect(await agent.flush()).toBe(true);
    fill(agent, 5);
    const done = agent.flush();
    await clock.advance(0);
    expect(await done).toBe(true);
    expect(service.stored(1)).toHaveLength(5);
    service.faults.push({ kind: 'status', status: 503 });
    fill(agent, 1);
    const failed = agent.flush();
    await clock.advance(0);
    expect(await failed).toBe(false);
    expect(agent.stats().queued).toBe(1);
  });

  it('stop() drains the queue, riding out a transient failure', async () => {
    const { agent, service, clock } = setup();
    await agent.start();
    fill(agent, 250);
    await clock.advance(0);
    fill(agent, 30, 2);
    service.faults.push({ kind: 'status', status: 500 });
    const stopped = agent.stop();
    await clock.advance(10_000);
    const stats = await stopped;
    expect(stats.queued).toBe(0);
    expect(service.stored(2)).toHaveLength(30);
    expect(stats.sent).toBe(280);
    expect(clock.pending).toBe(0);
  });

  it('stop() gives up draining after its timeout and keeps the count honest', async () => {
    const { agent, service, clock } = setup();
    await agent.start();
    fill(agent, 10);
    service.faultFor = () => ({ kind: 'network', maybeDelivered: false });
    const stopped = agent.stop({ timeoutMs: 5_000 });
    await clock.advance(5_000);
    const stats = await stopped;
    expect(stats.queued).toBe(10);
    expect(stats.sent).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it('jitters the first flush after start', async () => {
    const firsts = new Set<number>();
    for (let seed = 1; seed <= 5; seed++) {
      const { agent, service, clock } = setup({ seed }, { startJitterMs: 10_000, batch: 1 });
      await agent.start();
      agent.record(1, 1);
      await clock.advance(10_000);
      const first = posts(service)[0].at;
      expect(first).toBeGreaterThanOrEqual(0);
      expect(first).toBeLessThan(10_000);
      firsts.add(first);
    }
    expect(firsts.size).toBeGreaterThan(1);
  });
});

describe('failures', () => {
  it('retries a refused connection with backoff and counts nothing ambiguous', async () => {
    const { agent, service, clock } = setup();
    await agent.start();
    fill(agent, 5);
    service.faults.push({ kind: 'network', maybeDelivered: false }, { kind: 'network', maybeDelivered: false });
    void agent.flush();
    await clock.advance(60_000);
    expect(service.stored(1)).toEqual([0, 1, 2, 3, 4]);
    const s = agent.stats();
    expect(s.retries).toBe(2);
    expect(s.ambiguous).toBe(0);
    expect(s.sent).toBe(5);
  });

  it('counts a timeout after sending as ambiguous, and sends it again only if a read-back does not show it', async () => {
    const { agent, service, clock } = setup({}, { timeoutMs: 2_000 });
    await agent.start();
    fill(agent, 4);
    service.faults.push({ kind: 'timeout', store: true });
    void agent.flush();
    await clock.advance(60_000);
    expect(service.stored(1)).toEqual([0, 1, 2, 3]);
    expect(agent.stats()).toMatchObject({ ambiguous: 4, reconciled: 4, unresolved: 0, sent: 4, queued: 0 });
  });

  it.each([408, 429, 500, 502, 503])('retries status %i', async (status) => {
    const { agent, service, clock } = setup();
    await agent.start();
    fill(agent, 3);
    service.faults.push({ kind: 'status', status });
    void agent.flush();
    await clock.advance(60_000);
    expect(service.stored(1)).toEqual([0, 1, 2]);
    expect(agent.stats().retries).toBe(1);
  });

  it('counts a malformed 200 answer ambiguous, and reads back before sending again', async () => {
    const { agent, service, clock } = setup();
    await agent.start();
    fill(agent, 2);
    service.faults.push({ kind: 'body', body: '<html>oops</html>', store: false });
    void agent.flush();
    await clock.advance(60_000);
    expect(agent.stats()).toMatchObject({ ambiguous: 2, reconciled: 0, unresolved: 0 });
    expect(agent.stats().lastError).toMatch(/malformed|JSON/i);
    expect(service.stored(1)).toEqual([0, 1]);
  });

  it('honours Retry-After: no request before it', async () => {
    const { agent, service, clock } = setup();
    await agent.start();
    fill(agent, 1);
    service.faults.push({ kind: 'status', status: 429, retryAfter: '120' });
    void agent.flush();
    await clock.advance(0);
    expect(await agent.flush()).toBe(false);
    await clock.advance(119_999);
    expect(posts(service)).toHaveLength(1);
    await clock.advance(1);
    expect(posts(service)).toHaveLength(2);
    expect(posts(service)[1].at).toBe(120_000);
  });

  it('keeps backoff delays within [0, min(cap, base·2^attempt))', async () => {
    const { agent, service, clock } = setup({}, { backoffBaseMs: 1_000, backoffCapMs: 16_000 });
    await agent.start();
    fill(agent, 1);
    service.faultFor = () => ({ kind: 'network', maybeDelivered: false });
    void agent.flush();
    await clock.advance(300_000);
    const times = posts(service).map((r) => r.at);
    expect(times.length).toBeGreaterThan(10);
    for (let i = 1; i < times.length; i++) {
      const gap = times[i] - times[i - 1];
      expect(gap).toBeGreaterThanOrEqual(0);
      expect(gap).toBeLessThan(Math.min(16_000, 1_000 * 2 ** (i - 1)));
    }
    service.faultFor = null;
    await clock.advance(20_000);
    expect(service.stored(1)).toEqual([0]);
  });

  it('halves the batch on 413 until it fits', async () => {
    const { agent, service, clock } = setup({}, { batch: 100 });
    service.maxElements = 30;
    await agent.start();
    fill(agent, 100);
    await clock.advance(0);
    expect(posts(service).map((r) => r.elements).slice(0, 4)).toEqual([100, 50, 25, 25]);
    expect(service.stored(1)).toHaveLength(100);
    expect(agent.stats().batchLimit).toBe(25);
    expect(service.stored(1)).toEqual(Array.from({ length: 100 }, (_, i) => i));
  });

  it('sets aside a single sample the service finds too large (413), and the rest flows', async () => {
    const { agent, service, clock, setAside } = setup({}, { batch: 4 });
    service.maxElements = 0;
    await agent.start();
    fill(agent, 1);
    void agent.flush();
    await clock.advance(0);
    service.maxElements = 1000;
    fill(agent, 3, 1, 1);
    void agent.flush();
    await clock.advance(1_000);
    expect(setAside.map((s) => s.value)).toEqual([0]);
    expect(service.stored(1)).toEqual([1, 2, 3]);
    expect(agent.stats().queued).toBe(0);
  });

  it('pauses on 401, keeps every sample, and recovers when the token is accepted again', async () => {
    const { agent, service, clock } = setup({}, { authRetryMs: 60_000 });
    await agent.start();
    const token = service.token;
    service.token = 'rotated';
    fill(agent, 20);
    void agent.flush();
    await clock.advance(0);
    expect(agent.stats().authPaused).toBe(true);
    fill(agent, 5, 1, 20);
    await clock.advance(59_000);
    expect(posts(service)).toHaveLength(1);
    expect(await agent.flush()).toBe(false);
    service.token = token;
    await clock.advance(1_000);
    expect(agent.stats().authPaused).toBe(false);
    expect(service.stored(1)).toEqual(Array.from({ length: 25 }, (_, i) => i));
  });
});

describe('reconciliation', () => {
  const readBacks = (service: FakeService) => service.requests.filter((r) => r.url.includes('/feeds/last'));

  it('reads the batch back silently reconcileAfterMs after a timeout, newest resource first, and drops it when stored', async () => {
    const { agent, service, clock } = setup({}, { timeoutMs: 2_000, reconcileAfterMs: 20_000 });
    await agent.start();
    fill(agent, 3);
    fill(agent, 2, 2, 10);
    service.faults.push({ kind: 'timeout', store: true });
    void agent.flush();
    await clock.advance(21_999);
    expect(readBacks(service)).toHaveLength(0);
    await clock.advance(1);
    expect(readBacks(service).map((r) => [r.at, new URL(r.url).pathname.split('/')[5], r.silent])).toEqual([[22_000, '2,1', true]]);
    expect(posts(service)).toHaveLength(1);
    expect([service.stored(1), service.stored(2)]).toEqual([[0, 1, 2], [10, 11]]);
    expect(agent.stats()).toMatchObject({ ambiguous: 5, reconciled: 5, unresolved: 0, sent: 5, batches: 0, queued: 0 });
  });

  it('after a reset reads back at once, and sends again after the first backoff what the read shows was not stored, counted nowhere else', async () => {
    const { agent, service, clock } = setup();
    await agent.start();
    fill(agent, 3);
    service.faults.push({ kind: 'network', maybeDelivered: true, store: false });
    void agent.flush();
    await clock.advance(0);
    expect(readBacks(service).map((r) => r.at)).toEqual([0]);
    // The backoff's first wait, [backoffBaseMs / 2, backoffBaseMs): a send and its read-back never loop without one.
    await clock.advance(499);
    expect(service.stored(1)).toEqual([]);
    await clock.advance(501);
    expect(posts(service).map((r) => r.at)).toEqual([0, expect.toSatisfy((t: number) => t >= 500 && t < 1_000)]);
    expect(service.stored(1)).toEqual([0, 1, 2]);
    expect(agent.stats()).toMatchObject({ ambiguous: 3, reconciled: 0, unresolved: 0, queued: 0 });
  });

  it('waits the whole of reconcileAfterMs on a host whose timers fire a little early, as Node\'s do', async () => {
    // Node fires a timer once its loop clock, in whole ms, has moved by the delay (at least 1): up to 1 ms early.
    const early = (host: Host, clock: VirtualClock): Host => ({ ...host, setTimer: (ms, fn) => clock.setTimer(Math.max(1, ms) - 0.5, fn) });
    const { agent, service, clock } = setup({}, { timeoutMs: 1_000, reconcileAfterMs: 20_000 }, { host: early });
    await agent.start();
    fill(agent, 3);
    service.faults.push({ kind: 'timeout', store: false });
    void agent.flush();
    await clock.advance(60_000);
    expect(readBacks(service).every((r) => r.at >= 21_000)).toBe(true);
    expect(service.stored(1)).toEqual([0, 1, 2]);
    expect(agent.stats()).toMatchObject({ ambiguous: 3, reconciled: 0, unresolved: 0 });
  });

  it('turned off, sends the batch again unread and counts it unresolved', async () => {
    const { agent, service, clock } = setup({}, { reconcile: false });
    await agent.start();
    fill(agent, 3);
    service.faults.push({ kind: 'network', maybeDelivered: true, store: true });
    void agent.flush();
    await clock.advance(60_000);
    expect(readBacks(service)).toHaveLength(0);
    expect(service.stored(1)).toEqual([0, 1, 2, 0, 1, 2]);
    expect(agent.stats()).toMatchObject({ ambiguous: 3, reconciled: 0, unresolved: 3 });
  });

  it('does not read back a batch that holds an actuator\'s resource: the platform writes there too', async () => {
    const { agent, service, clock } = setup({ actuators: [{ resource: 5, every: 600_000, handle: () => {} }] });
    await agent.start();
    await clock.advance(0);
    const polls = readBacks(service).length;
    fill(agent, 2);
    agent.record(5, 1);
    service.faults.push({ kind: 'network', maybeDelivered: true, store: true });
    void agent.flush();
    await clock.advance(60_000);
    expect(readBacks(service)).toHaveLength(polls);
    expect(service.stored(1)).toEqual([0, 1, 0, 1]);
    expect(agent.stats()).toMatchObject({ ambiguous: 3, reconciled: 0, unresolved: 3 });
  });

  it('does not take a feed that was there before the request, with the same value, for the batch', async () => {
    const { agent, service, clock } = setup();
    service.command(1, 7);
    await agent.start();
    agent.record(1, 7);
    service.faults.push({ kind: 'network', maybeDelivered: true, store: false });
    void agent.flush();
    await clock.advance(60_000);
    expect(readBacks(service)).toHaveLength(1);
    expect(service.stored(1)).toEqual([7, 7]);
    expect(agent.stats()).toMatchObject({ ambiguous: 1, reconciled: 0, unresolved: 0, sent: 1 });
  });

  it('does not take the batch\'s values for it when they stand in another order (another writer)', async () => {
    const { agent, service, clock } = setup();
    await agent.start();
    agent.record(1, 5);
    agent.record(2, 6);
    service.faults.push({ kind: 'timeout', store: false });
    void agent.flush();
    await clock.advance(0);
    // While the request is out, someone else writes the same values, the later element's first.
    service.command(2, 6);
    service.command(1, 5);
    await clock.advance(60_000);
    expect([service.stored(1), service.stored(2)]).toEqual([[5, 5], [6, 6]]);
    expect(agent.stats()).toMatchObject({ ambiguous: 2, reconciled: 0, unresolved: 2 });
  });

  it('stops reading back once the service answered in the {success, failed} form: it may store part of a batch', async () => {
    const { agent, service, clock } = setup();
    service.failedForm = true;
    await agent.start();
    fill(agent, 2);
    await agent.flush();
    fill(agent, 2, 1, 2);
    service.faults.push({ kind: 'network', maybeDelivered: true, store: true });
    void agent.flush();
    await clock.advance(60_000);
    expect(readBacks(service)).toHaveLength(0);
    expect(service.stored(1)).toEqual([0, 1, 2, 3, 2, 3]);
    expect(agent.stats()).toMatchObject({ ambiguous: 2, unresolved: 2 });
  });

  it('flush() does not wait: a read-back that shows nothing before reconcileAfterMs proves nothing, so it counts unresolved', async () => {
    const { agent, service, clock } = setup({}, { timeoutMs: 1_000 });
    await agent.start();
    fill(agent, 3);
    service.faults.push({ kind: 'timeout', store: false });
    const first = agent.flush();
    await clock.advance(1_000);
    expect(await first).toBe(false);
    const done = agent.flush();
    // Read back at once; sent again after the backoff's first wait.
    await clock.advance(1_000);
    expect(await done).toBe(true);
    expect(readBacks(service).map((r) => r.at)).toEqual([1_000]);
    expect(service.stored(1)).toEqual([0, 1, 2]);
    expect(agent.stats()).toMatchObject({ ambiguous: 3, reconciled: 0, unresolved: 3 });
  });
});

describe('isolation of refused elements', () => {
  const extra = Math.ceil(Math.log2(100)) + 1;

  it.each([0, 37, 99])('bisects to one bad element among 100 (index %i) within ⌈log2 100⌉+1 extra requests', async (bad) => {
    const { agent, service, clock, setAside } = setup();
    service.nameIndex = false;
    service.refuse = (_r, input) => input === bad;
    await agent.start();
    fill(agent, 100);
    await clock.advance(0);
    expect(posts(service).length - 1).toBeLessThanOrEqual(extra);
    expect(service.stored(1)).toEqual(Array.from({ length: 100 }, (_, i) => i).filter((i) => i !== bad));
    expect(setAside).toEqual([{ resource: 1, value: bad, reason: expect.stringContaining('refused') }]);
    expect(agent.stats()).toMatchObject({ setAside: 1, sent: 99, queued: 0 });
  });

  it('uses the index the service names: two extra requests', async () => {
    const { agent, service, clock, setAside } = setup();
    service.refuse = (_r, input) => input === 60;
    await agent.start();
    fill(agent, 100);
    await clock.advance(0);
    expect(posts(service).map((r) => r.elements)).toEqual([100, 60, 39]);
    expect(setAside.map((s) => s.value)).toEqual([60]);
  });

  it('stops, without hanging, when stop() is called from onSetAside while the uplink is about to run', async () => {
    let stopped: Promise<unknown> | null = null;
    const { agent, service, clock } = setup({ onSetAside: () => void (stopped = agent.stop({ flush: false })) });
    service.refuse = (_r, input) => input === 5;
    await agent.start();
    agent.record(1, 5);
    void agent.flush();
    await clock.advance(0);
    expect(stopped).not.toBeNull();
    let settled = false;
    void (stopped as unknown as Promise<unknown>).then(() => (settled = true));
    await clock.advance(1_000);
    expect(settled).toBe(true);
  });

  it('sets aside several bad elements and delivers the rest', async () => {
    const { agent, service, clock, setAside } = setup();
    service.nameIndex = false;
    const bad = new Set([3, 4, 50, 98]);
    service.refuse = (_r, input) => bad.has(input as number);
    await agent.start();
    fill(agent, 100);
    await clock.advance(0);
    expect(setAside.map((s) => s.value)).toEqual([3, 4, 50, 98]);
    expect(service.stored(1)).toHaveLength(96);
  });

  it('takes the {success, failed} form: the failed ones are set aside, the rest counted as sent', async () => {
    const { agent, service, clock, setAside } = setup();
    service.failedForm = true;
    service.refuse = (_r, input) => input === 2 || input === 7;
    await agent.start();
    fill(agent, 10);
    await clock.advance(0);
    await agent.flush();
    expect(posts(service)).toHaveLength(1);
    expect(setAside.map((s) => s.value)).toEqual([2, 7]);
    expect(agent.stats()).toMatchObject({ sent: 8, setAside: 2, queued: 0 });
  });

  it('an unknown resource in the queue does not block the others', async () => {
    const { agent, service, clock, setAside } = setup({ sensors: [] });
    await agent.start();
    fill(agent, 5, 1);
    // Resource 1 disappears on the service side after start.
    service.resources.splice(0, 1);
    fill(agent, 5, 2);
    await agent.flush();
    await clock.advance(0);
    expect(setAside).toHaveLength(5);
    expect(service.stored(2)).toEqual([0, 1, 2, 3, 4]);
  });
});

describe('overflow', () => {
  it('drops the oldest by default, counted exactly, during an outage', async () => {
    const { agent, service, clock } = setup({}, { queue: 10 });
    service.faultFor = () => ({ kind: 'network', maybeDelivered: false });
    await agent.start();
    fill(agent, 25);
    expect(agent.stats()).toMatchObject({ queued: 10, droppedOverflow: 15, highWater: 10, accepted: 25 });
    service.faultFor = null;
    expect(await agent.flush()).toBe(true);
    await clock.advance(0);
    expect(service.stored(1)).toEqual([15, 16, 17, 18, 19, 20, 21, 22, 23, 24]);
  });

  it('drops the newest when told to', async () => {
    const { agent, service, clock } = setup({}, { queue: 10, overflow: 'drop-newest' });
    await agent.start();
    service.faultFor = () => ({ kind: 'network', maybeDelivered: false });
    for (let i = 0; i < 25; i++) expect(agent.record(1, i)).toBe(i < 10 ? 'queued' : 'full');
    expect(agent.stats()).toMatchObject({ queued: 10, droppedOverflow: 15, accepted: 10 });
    service.faultFor = null;
    await agent.flush();
    await clock.advance(0);
    expect(service.stored(1)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('never evicts samples that are in flight, nor a batch waiting to be read back', async () => {
    const { agent, service, clock } = setup({}, { queue: 10, batch: 4, timeoutMs: 1_000 });
    await agent.start();
    service.faults.push({ kind: 'timeout' });
    fill(agent, 4);
    await clock.advance(0);
    fill(agent, 20, 1, 4);
    await clock.advance(60_000);
    expect(service.stored(1).slice(0, 4)).toEqual([0, 1, 2, 3]);
    const s = agent.stats();
    expect(s.sent + s.droppedOverflow + s.queued).toBe(24);
  });
});

describe('sampling', () => {
  it('samples on schedule without drift and keeps order per resource', async () => {
    const times: number[] = [];
    let n = 0;
    const { agent, service, clock } = setup({
      sensors: [
        { resource: 1, every: 100, read: () => (times.push(clock.now()), n++) },
        { resource: 2, every: 250, read: () => n },
      ],
    }, { flushMs: 1_000 });
    await agent.start();
    await clock.advance(2_000);
    expect(times).toEqual(Array.from({ length: 21 }, (_, k) => k * 100));
    await agent.flush();
    await clock.advance(0);
    const one = service.stored(1) as number[];
    expect(one).toEqual([...one].sort((a, b) => a - b));
    expect(service.stored(2)).toHaveLength(9);
  });

  it('counts and skips bad readings, and carries on', async () => {
    let calls = 0;
    const values: unknown[] = [5, NaN, Infinity, { x: 1 }, null, 101, -1, 'abc', 50];
    const { agent, service, clock } = setup({
      sensors: [
        { resource: 3, every: 10, read: () => values[calls++] as SampleValue },
        { resource: 2, every: 30, read: () => { throw new Error('i2c bus stuck'); } },
        { resource: 4, every: 1_000, read: () => 'maybe' },
      ],
    });
    await agent.start();
    await clock.advance(80);
    await agent.flush();
    await clock.advance(0);
    expect(service.stored(3)).toEqual([5, 50]);
    expect(service.stored(4)).toEqual([]);
    const s = agent.stats();
    expect(s.rejectedInvalid).toBe(7 + 3 + 1);
    expect(s.lastError).toBeTruthy();
    expect(service.logs.some((l) => l.message.includes('i2c bus stuck'))).toBe(true);
  });

  it('takes asynchronous reads, and skips a tick rather than piling reads up', async () => {
    let resolveRead: ((v: number) => void) | null = null;
    const { agent, service, clock } = setup({
      sensors: [{ resource: 1, every: 100, read: () => new Promise<number>((r) => { resolveRead = r; }) }],
    });
    await agent.start();
    await clock.advance(250);
    resolveRead!(42);
    await clock.advance(0);
    await agent.flush();
    await clock.advance(0);
    expect(service.stored(1)).toEqual([42]);
  });

  it('allows a valid boolean, string and regex match, and refuses an unconfigured resource', async () => {
    const { agent, service, clock } = setup();
    await agent.start();
    expect(agent.record(6, 1)).toBe('refused');
    expect(agent.record(5, true)).toBe('queued');
    expect(agent.record(4, 'on')).toBe('queued');
    expect(agent.record(4, 'onn')).toBe('refused');
    expect(agent.record(3, '42')).toBe('queued');
    await agent.flush();
    await clock.advance(0);
    expect(service.stored(5)).toEqual([true]);
    expect(service.stored(4)).toEqual(['on']);
  });
});

describe('commands', () => {
  it('runs the handler once for each new feed, never twice', async () => {
    const seen: SampleValue[] = [];
    const { agent, service, clock } = setup({ actuators: [{ resource: 5, every: 1_000, handle: (v) => { seen.push(v); } }] });
    service.command(5, 1);
    await agent.start();
    await clock.advance(1_500);
    expect(seen).toEqual([]);
    service.command(5, 0);
    await clock.advance(3_000);
    service.command(5, 1);
    await clock.advance(1_000);
    expect(seen).toEqual([false, true]);
    expect(agent.stats().commands).toBe(2);
    expect(service.requests.filter((r) => r.url.includes('/feeds/last')).every((r) => r.silent)).toBe(true);
  });

  it('applies the current command at start when asked, parses values, and survives a throwing handler', async () => {
    const seen: SampleValue[] = [];
    const { agent, service, clock } = setup({
      actuators: [
        { resource: 4, every: 500, applyCurrent: true, handle: (v) => { seen.push(v); } },
        { resource: 3, every: 500, handle: () => { throw new Error('relay jammed'); } },
      ],
    });
    service.command(4, 'on');
    await agent.start();
    await clock.advance(0);
    service.command(3, 12);
    await clock.advance(600);
    expect(seen).toEqual(['on']);
    expect(agent.stats()).toMatchObject({ commands: 2, commandErrors: 1 });
    expect(agent.stats().lastError).toContain('relay jammed');
  });
});

describe('start-up and presence', () => {
  it('names a configured id that does not exist', async () => {
    const { agent } = setup({ sensors: [{ resource: 1, every: 1_000, read: () => 1 }, { resource: 99, every: 1_000, read: () => 1 }] });
    await expect(agent.start()).rejects.toThrow(ConfigError);
    await expect(agent.start()).rejects.toThrow(/started already/);
    const again = setup({ actuators: [{ resource: 77, every: 1_000, handle: () => {} }] });
    await expect(again.agent.start()).rejects.toThrow(/resource 77 does not exist/);
  });

  it('refuses to start with a token the service refuses', async () => {
    const { agent, service } = setup({ sensors: [{ resource: 1, every: 1_000, read: () => 1 }] });
    service.token = 'other';
    await expect(agent.start()).rejects.toThrow(/401/);
  });

  it('samples while the service is unreachable at start, and retries the lookup on the backoff, up to lookupRetryMs apart', async () => {
    const { agent, service, clock } = setup({ sensors: [{ resource: 3, every: 1_000, read: () => 500 }], lookupRetryMs: 9_500, resources: [] });
    service.unreachable = true;
    await agent.start();
    await clock.advance(20_000);
    expect(agent.stats().accepted).toBe(21);
    const lookups = (): number[] => service.requests.filter((r) => r.method === 'GET' && !r.silent).map((r) => r.at);
    const tried = lookups();
    // The ladder's k-th wait is at least half of min(9.5 s, 1 s·2^k) and shorter than it.
    for (let k = 1; k < tried.length; k++) {
      const ceiling = Math.min(9_500, 1_000 * 2 ** (k - 1));
      expect(tried[k] - tried[k - 1]).toBeGreaterThanOrEqual(ceiling / 2);
      expect(tried[k] - tried[k - 1]).toBeLessThan(ceiling);
    }
    service.unreachable = false;
    await clock.advance(10_000);
    // The next lookup came within lookupRetryMs and succeeded: from then on 500 is outside 0..100.
    const found = lookups().filter((t) => t > 20_000)[0];
    expect(found - 20_000).toBeLessThan(9_500);
    const { accepted, rejectedInvalid } = agent.stats();
    expect(accepted + rejectedInvalid).toBe(31);
    // The samples of each second from the lookup's answer on; the one of its very ms either way.
    expect(rejectedInvalid - Math.floor((30_000 - found) / 1_000)).toBeGreaterThanOrEqual(0);
    expect(rejectedInvalid - Math.floor((30_000 - found) / 1_000)).toBeLessThanOrEqual(1);
  });

  it('keeps presence alive with a non-silent read when nothing else reached the service', async () => {
    const { agent, service, clock } = setup({ sensors: [{ resource: 1, every: 600_000, read: () => 1 }] }, { flushMs: 10_000 });
    await agent.start();
    await clock.advance(20_000);
    const before = service.requests.length;
    // lifetime 15 min → a presence read every 7.5 min.
    await clock.advance(450_000);
    const reads = service.requests.slice(before).filter((r) => r.method === 'GET' && !r.silent);
    expect(reads).toHaveLength(1);
    expect(reads[0].at).toBe(10_000 + 450_000);
  });

  it('canSleep() says when nothing is queued or in flight', async () => {
    const { agent, clock } = setup({}, { timeoutMs: 1_000 });
    await agent.start();
    expect(agent.canSleep()).toBe(true);
    agent.record(1, 1);
    expect(agent.canSleep()).toBe(false);
    await agent.flush();
    await clock.advance(0);
    expect(agent.canSleep()).toBe(true);
  });
});

describe('configuration', () => {
  it('lists every problem in one message', () => {
    let error: unknown = null;
    try {
      createAgent(new FakeService(newClock(), []).host(), {
        url: 'ftp://x',
        publicKey: '',
        token: 'SECRET-TOKEN-XYZ',
        sensors: [{ resource: -1, every: 0, read: 5 }],
        uplink: { batch: 5000, bacth: 1 },
        extra: true,
      } as unknown as AgentConfig);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toEqual(expect.arrayContaining([
      'extra: unknown key',
      expect.stringMatching(/^url: /),
      expect.stringMatching(/^publicKey: /),
      expect.stringMatching(/^sensors\[0\]\.resource: /),
      expect.stringMatching(/^sensors\[0\]\.every: /),
      expect.stringMatching(/^sensors\[0\]\.read: /),
      expect.stringMatching(/^uplink\.batch: expected at most 1000/),
      'uplink.bacth: unknown key',
    ]));
    expect(problems).toHaveLength(8);
    expect((error as Error).message).not.toContain('SECRET-TOKEN-XYZ');
  });

  it('names the new key of a renamed one', () => {
    const config = { url: 'http://127.0.0.1:1', publicKey: 'k', token: 't', keepAliveMs: 60_000 } as unknown as AgentConfig;
    expect(() => createAgent(new FakeService(newClock(), []).host(), config)).toThrow('invalid agent config: keepAliveMs: renamed presenceMs');
  });
});

describe('secrets', () => {
  it('never lets the token into logs, stats or set-aside reasons', async () => {
    const { agent, service, clock, setAside } = setup({}, { authRetryMs: 1_000 });
    await agent.start();
    service.faults.push({ kind: 'status', status: 401, message: 'token ' + service.token + ' is not valid' });
    service.faults.push({ kind: 'status', status: 422, message: 'element 0: ' + service.token + ' refused' });
    fill(agent, 1);
    void agent.flush();
    await clock.advance(5_000);
    const everything = JSON.stringify([service.logs, agent.stats(), setAside]);
    expect(setAside).toHaveLength(1);
    expect(everything).not.toContain(service.token);
  });
});

/** A durable storage in memory: what it holds survives a new agent made on it, as a file survives a crash. */
function memoryStorage(spillEvery?: number) {
  const log: { seq: number; resource: number; value: SampleValue; at: number }[] = [];
  const ops: string[] = [];
  let acked = -1;
  const storage: QueueStorage = {
    spillEvery,
    load: (visit) => {
      for (const r of log) if (r.seq > acked) visit(r.seq, r.resource, r.value, r.at);
      return log.length === 0 ? 0 : log[log.length - 1].seq + 1;
    },
    append: (seq, resource, value, at) => {
      ops.push('append ' + seq);
      log.push({ seq, resource, value, at });
    },
    ack: (seq) => {
      ops.push('ack ' + seq);
      acked = seq;
    },
    commit: () => {
      ops.push('commit');
    },
  };
  return { storage, log, ops, acked: () => acked, held: () => log.filter((r) => r.seq > acked).map((r) => r.value) };
}

describe('durable storage contract', () => {
  it('restores unacknowledged samples oldest first and checkpoints what left', async () => {
    const { storage, log, acked } = memoryStorage();
    const first = setup({}, {}, { storage });
    first.service.faultFor = () => ({ kind: 'network', maybeDelivered: false });
    await first.agent.start();
    fill(first.agent, 5);
    expect(log.map((r) => r.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(acked()).toBe(-1);
    // "Crash": a new agent on the same storage.
    const second = setup({}, {}, { storage });
    await second.agent.start();
    expect(second.agent.stats().queued).toBe(5);
    second.agent.record(1, 5);
    expect(log[log.length - 1].seq).toBe(5);
    await second.agent.flush();
    await second.clock.advance(0);
    expect(second.service.stored(1)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(acked()).toBe(5);
  });

  it('refuses a string longer than the string pool, by its UTF-8 bytes, in memory and with a backlog', async () => {
    for (const storage of [undefined, memoryBacklog(8, 100)]) {
      const { agent } = setup({}, { queue: 2, stringBytes: 2 }, { storage });
      await agent.start();
      // With a backlog, a full window sends the sample to storage: it is refused there too.
      if (storage !== undefined) fill(agent, 3);
      expect(agent.record(4, 'on')).toBe('queued');
      expect(agent.record(4, 'off')).toBe('refused');
      expect(agent.lastRefusal).toBe('resource 4: string of 3 bytes (UTF-8) is too large for the queue');
      expect(agent.stats().rejectedInvalid).toBe(1);
      await agent.stop();
    }
  });

  it('counts a storage that fails to keep the batch out, or to give it back, and delivers all the same', async () => {
    const { storage } = memoryStorage();
    storage.sending = () => {
      throw new Error('disk gone');
    };
    storage.inFlight = () => {
      throw new Error('disk gone');
    };
    const first = setup({}, {}, { storage });
    first.service.faultFor = () => ({ kind: 'network', maybeDelivered: false });
    await first.agent.start();
    fill(first.agent, 3);
    void first.agent.flush();
    await first.clock.advance(0);
    expect(first.agent.stats().storageErrors).toBe(1);
    // A new agent on the same storage: the batch that was out cannot be read, so it is sent as any other.
    const second = setup({}, {}, { storage });
    await second.agent.start();
    expect(second.agent.stats().storageErrors).toBe(1);
    await second.agent.flush();
    await second.clock.advance(0);
    expect(second.service.stored(1)).toEqual([0, 1, 2]);
    expect(second.agent.stats().storageErrors).toBe(2);
  });

  it('writes each sample as the queue holds it, strings too, and an eviction is acknowledged at once', async () => {
    const { storage, log, ops } = memoryStorage();
    const { agent } = setup({}, { queue: 3 }, { storage });
    await agent.start();
    for (const [resource, value] of [[4, 'on'], [1, 7], [4, 'off'], [4, 'on']] as const) expect(agent.record(resource, value)).toBe('queued');
    expect(log.map((r) => [r.seq, r.resource, r.value])).toEqual([[0, 4, 'on'], [1, 1, 7], [2, 4, 'off'], [3, 4, 'on']]);
    expect(ops).toEqual(['append 0', 'append 1', 'append 2', 'append 3', 'ack 0']);
  });
});

describe('durable storage that writes only when needed (spillEvery)', () => {
  const down = { kind: 'network', maybeDelivered: false } as const;

  it('writes nothing while the service answers', async () => {
    const { storage, ops } = memoryStorage(4);
    const { agent, service, clock } = setup({}, { batch: 5, flushMs: 1_000 }, { storage });
    await agent.start();
    for (let i = 0; i < 40; i++) {
      agent.record(1, i);
      await clock.advance(100);
    }
    await agent.stop();
    expect(service.stored(1)).toHaveLength(40);
    expect(ops).toEqual([]);
  });

  it('after a failed flush, writes the unwritten samples in bursts of spillEvery, then acknowledges as they leave', async () => {
    const { storage, ops, held } = memoryStorage(4);
    const { agent, service, clock } = setup({}, { batch: 100, flushMs: 1_000, backoffBaseMs: 1_000, backoffCapMs: 1_000 }, { storage });
    await agent.start();
    fill(agent, 3);
    service.faultFor = () => down;
    await clock.advance(1_000);
    expect(ops).toEqual([]);
    // The fourth unwritten sample starts a burst of all four, committed once.
    fill(agent, 1, 1, 3);
    expect(ops).toEqual(['append 0', 'append 1', 'append 2', 'append 3', 'commit']);
    fill(agent, 3, 1, 4);
    expect(ops).toHaveLength(5);
    agent.record(1, 7);
    expect(ops.slice(5)).toEqual(['append 4', 'append 5', 'append 6', 'append 7', 'commit']);
    expect(held()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    service.faultFor = null;
    agent.record(1, 8);
    await agent.flush();
    // Everything it held left the queue: one acknowledgement, up to the newest sample it holds.
    expect(ops.slice(10)).toEqual(['ack 7']);
    expect(service.stored(1)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(held()).toEqual([]);
  });

  it('keeps a full queue from writing per sample during a long outage', async () => {
    const { storage, ops, held } = memoryStorage(16);
    const { agent, service, clock } = setup({}, { queue: 32, batch: 8, flushMs: 100, backoffBaseMs: 500, backoffCapMs: 500 }, { storage });
    await agent.start();
    service.faultFor = () => down;
    for (let i = 0; i < 1_000; i++) {
      agent.record(1, i);
      await clock.advance(10);
    }
    const writes = ops.filter((op) => op === 'commit' || op.startsWith('ack')).length;
    // One burst (and at most one acknowledgement) per 16 samples, not one write per sample.
    expect(writes).toBeLessThanOrEqual(2 * Math.ceil(1_000 / 16));
    expect(agent.stats().droppedOverflow).toBeGreaterThan(900);
    // What a crash now would restore: the queue as of the last burst, in order, short of fewer than 16.
    const restored = held() as number[];
    expect(restored.length).toBeLessThanOrEqual(32);
    expect(restored).toEqual(Array.from({ length: restored.length }, (_, k) => restored[0] + k));
    expect(999 - restored[restored.length - 1]).toBeLessThan(16);
  });

  it('waits for spillEvery queued unwritten samples after a failure, however long it ran well before', async () => {
    const { storage, ops } = memoryStorage(8);
    const { agent, service, clock } = setup({}, { batch: 5, flushMs: 1_000, backoffBaseMs: 1_000, backoffCapMs: 1_000 }, { storage });
    await agent.start();
    fill(agent, 50);
    await clock.advance(2_000);
    expect(agent.stats().queued).toBe(0);
    service.faultFor = () => down;
    fill(agent, 3, 1, 50);
    await clock.advance(1_000);
    fill(agent, 4, 1, 53);
    // One failure and 7 queued samples: fewer than 8, nothing to write yet.
    expect(ops).toEqual([]);
    agent.record(1, 57);
    expect(ops.filter((op) => op === 'commit')).toHaveLength(1);
  });

  it('tries a storage that fails again only spillEvery samples later, and persist() says it wrote nothing', async () => {
    const { storage } = memoryStorage(4);
    let attempts = 0;
    storage.append = () => {
      attempts++;
      throw new Error('flash full');
    };
    const { agent, service, clock } = setup({}, { batch: 100, flushMs: 1_000, backoffBaseMs: 1_000, backoffCapMs: 1_000 }, { storage });
    await agent.start();
    service.faultFor = () => down;
    fill(agent, 2);
    await clock.advance(1_000);
    fill(agent, 40, 1, 2);
    // One burst per 4 new samples, not one per sample: 40 samples after the first failure, about 10 tries.
    expect(attempts).toBeLessThanOrEqual(11);
    expect(agent.stats().storageErrors).toBe(attempts);
    expect(agent.persist()).toBe(0);
    expect(agent.stats().queued).toBe(42);
  });

  it('persist() writes what is unwritten at once, for deep sleep; stop() does when samples stay queued', async () => {
    const { storage, held } = memoryStorage(100);
    const first = setup({}, { flushMs: 60_000 }, { storage });
    await first.agent.start();
    fill(first.agent, 5);
    expect(first.agent.persist()).toBe(5);
    expect(first.agent.persist()).toBe(0);
    expect(held()).toEqual([0, 1, 2, 3, 4]);
    first.service.faultFor = () => down;
    fill(first.agent, 2, 1, 5);
    const stopped = first.agent.stop({ timeoutMs: 1_000 });
    await first.clock.advance(1_000);
    expect((await stopped).queued).toBe(7);
    expect(held()).toEqual([0, 1, 2, 3, 4, 5, 6]);
    // After the reboot: every sample comes back and is delivered once.
    const second = setup({}, {}, { storage });
    await second.agent.start();
    expect(second.agent.stats().queued).toBe(7);
    await second.agent.flush();
    expect(second.service.stored(1)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(held()).toEqual([]);
  });
});

describe('turns granted by the host', () => {
  it('waits for a turn before each request, and a batch carries what was queued up to its turn', async () => {
    const waiting: (() => void)[] = [];
    const grant = () => (waiting.shift() as () => void)();
    const turns = (host: Host): Host => ({ ...host, turn: () => new Promise<void>((go) => waiting.push(go)) });
    const { agent, service, clock } = setup({}, { batch: 10, flushMs: 1000 }, { host: turns });
    const started = agent.start();
    await clock.advance(0);
    // The start's lookup is a request: it waits too.
    expect(service.requests).toHaveLength(0);
    grant();
    await started;
    expect(service.requests.map((r) => r.method)).toEqual(['GET']);
    fill(agent, 3);
    await clock.advance(1000);
    // The flush is due and waits for its turn; what comes meanwhile goes with it.
    expect(waiting).toHaveLength(1);
    fill(agent, 4, 1, 3);
    await clock.advance(0);
    expect(posts(service)).toHaveLength(0);
    grant();
    await clock.advance(0);
    expect(posts(service).map((r) => r.elements)).toEqual([7]);
    expect(service.stored(1)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    // One turn, one request: none went without one.
    expect(service.requests).toHaveLength(2);
  });
});

describe('memory lent by the host', () => {
  it('keeps its queue in the regions the host lends: grown for a burst, given back once it left', async () => {
    const lent: Uint8Array[] = [];
    const given: Uint8Array[] = [];
    const memory = { take: (bytes: number) => (lent.push(new Uint8Array(bytes)), lent[lent.length - 1]), give: (region: Uint8Array) => void given.push(region) };
    const { agent, service, clock } = setup({}, { batch: 100, flushMs: 1000, queue: 256 }, { host: (host: Host): Host => ({ ...host, memory }) });
    expect(lent).toHaveLength(1);
    await agent.start();
    fill(agent, 5);
    // The samples are written into the lent region.
    expect(lent[0].some((x) => x !== 0)).toBe(true);
    // A burst: the ring doubles from 32 to 64, then to 128, each time in a new region, the old one given back.
    fill(agent, 95, 1, 5);
    expect(lent.map((r) => r.byteLength)).toEqual([lent[0].byteLength, 2 * lent[0].byteLength - 2048 - 60, 4 * lent[0].byteLength - 3 * (2048 + 60)]);
    expect(given).toEqual(lent.slice(0, 2));
    await clock.advance(1000);
    expect(service.stored(1)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    // Delivered: back to the smallest ring.
    expect(lent).toHaveLength(4);
    expect(lent[3].byteLength).toBe(lent[0].byteLength);
    expect(given).toEqual(lent.slice(0, 3));
    expect(agent.stats().capacity).toBe(256);
  });
});
