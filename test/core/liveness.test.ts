// Delivery stays live under the faults that once stopped it: an unknown outcome at the default settings,
// an overflow eviction while a refused element is isolated, a command handler that never settles, and a
// resource that disappears from the service. Each one stopped delivery or set a valid reading aside.
import { describe, expect, it } from 'vitest';
import type { AgentConfig, UplinkConfig } from '../../src/core/config';
import type { Host } from '../../src/core/host/host';
import { FakeService } from '../support/fake-service';
import type { FakeResource } from '../support/fake-service';
import { fakeAgent } from '../support/fake-agent';
import type { VirtualClock } from '../support/virtual-clock';

const RESOURCES: FakeResource[] = [
  { id: 1, begin: 0, end: 1_000_000 },
  { id: 2, begin: 0, end: 1_000_000 },
  { id: 5, begin: 0, end: 1 },
];

/** An agent at the default uplink settings but for the start jitter, on a fake service and a virtual clock. */
function setup(config: Partial<AgentConfig> = {}, uplink: Partial<UplinkConfig> = {}, wrap?: (host: Host, clock: VirtualClock) => Host) {
  return fakeAgent(RESOURCES, { resources: [1, 2], ...config }, uplink, { host: wrap });
}

const range = (from: number, count: number): number[] => Array.from({ length: count }, (_, i) => from + i);
const posts = (service: FakeService) => service.requests.filter((r) => r.method === 'POST');

describe('an unknown outcome at the default settings', () => {
  it('after a reset once the service stored the batch: read back at once, and nothing waits 30 s', async () => {
    const { agent, service, clock } = setup();
    await agent.start();
    service.faults.push({ kind: 'network', maybeDelivered: true, store: true });
    for (const v of range(0, 100)) agent.record(1, v);
    await clock.advance(1_000);
    for (const v of range(100, 100)) agent.record(1, v);
    await clock.advance(4_000);
    expect(service.stored(1)).toEqual(range(0, 200));
    expect(agent.stats()).toMatchObject({ queued: 0, ambiguous: 100, reconciled: 100, unresolved: 0 });
    await agent.stop();
  });

  it('after a timeout: delivery stops for a few seconds at most', async () => {
    const { agent, service, clock } = setup();
    await agent.start();
    service.faults.push({ kind: 'timeout', store: true });
    for (const v of range(0, 100)) agent.record(1, v);
    // The request itself times out after timeoutMs (10 s); then a few seconds more at most.
    await clock.advance(10_000 + 5_000);
    expect(service.stored(1)).toEqual(range(0, 100));
    for (const v of range(100, 100)) agent.record(1, v);
    await clock.advance(0);
    expect(service.stored(1)).toEqual(range(0, 200));
    expect(agent.stats()).toMatchObject({ queued: 0, ambiguous: 100, reconciled: 100, unresolved: 0 });
    await agent.stop();
  });

  it('stop() drains at once after an unknown outcome: it reads back rather than waiting out the window', async () => {
    const { agent, service, clock } = setup();
    await agent.start();
    for (const v of range(0, 30)) agent.record(1, v);
    service.faults.push({ kind: 'network', maybeDelivered: true, store: true });
    expect(await agent.flush()).toBe(false);
    for (const v of range(30, 30)) agent.record(1, v);
    const stopped = agent.stop({ timeoutMs: 2_000 });
    await clock.advance(2_000);
    const stats = await stopped;
    expect(service.stored(1)).toEqual(range(0, 60));
    expect(stats).toMatchObject({ queued: 0, reconciled: 30, unresolved: 0 });
  });
});

describe('isolation beside overflow', () => {
  it('never sets aside a valid reading when an eviction shifts the queue while a prefix is out', async () => {
    // Operation 4 answers after 100 ms, so that a record() lands while the prefix before the refused element is out.
    const slow = (host: Host, clock: VirtualClock): Host => ({
      ...host,
      request: (req) => host.request(req).then((result) => (req.method === 'POST' ? new Promise((resolve) => clock.setTimer(100, () => resolve(result))) : result)),
    });
    const { agent, service, clock, setAside } = setup({}, { queue: 10, batch: 10 }, slow);
    service.refuse = (_r, input) => input === 5;
    await agent.start();
    for (const v of range(0, 10)) agent.record(1, v);
    // The batch of 10 is refused (element 5); the prefix of 5 goes next.
    await clock.advance(150);
    expect(posts(service).map((r) => r.elements)).toEqual([10, 5]);
    // Queue full: this evicts the oldest sample outside what the uplink reasons about.
    agent.record(1, 10);
    await clock.advance(10_000);
    expect(setAside.map((s) => s.value)).toEqual([5]);
    const stats = agent.stats();
    expect(service.stored(1)).not.toContain(5);
    expect(stats.sent + stats.droppedOverflow + stats.setAside + stats.queued).toBe(11);
    // Every valid reading was stored, or evicted by the overflow and counted.
    expect(service.stored(1).length + stats.droppedOverflow).toBe(10);
    await agent.stop();
  });
});

describe('commands', () => {
  it('a handler that never settles does not stop delivery', async () => {
    const handled: unknown[] = [];
    const { agent, service, clock } = setup({
      actuators: [{ resource: 5, every: 1_000, handle: (v) => { handled.push(v); return new Promise<void>(() => undefined); } }],
    }, { flushMs: 1_000 });
    await agent.start();
    service.command(5, 1);
    await clock.advance(1_500);
    expect(handled).toEqual([true]);
    for (const v of range(0, 20)) agent.record(1, v);
    await clock.advance(60_000);
    expect(service.stored(1)).toEqual(range(0, 20));
    await agent.stop();
  });
});

describe('commands beside delivery', () => {
  it('a slow handler holds the next command of its actuator until its time limit, then is reported and no longer awaited', async () => {
    const handled: unknown[] = [];
    const { agent, service, clock } = setup({
      actuators: [{ resource: 5, every: 500, timeoutMs: 5_000, handle: (v) => { handled.push(v); return handled.length === 1 ? new Promise<void>(() => undefined) : undefined; } }],
    });
    await agent.start();
    service.command(5, 1);
    await clock.advance(600);
    service.command(5, 0);
    await clock.advance(1_000);
    expect(handled).toEqual([true]);
    await clock.advance(4_000);
    expect(handled).toEqual([true, false]);
    expect(agent.stats()).toMatchObject({ commands: 2, commandErrors: 1 });
    expect(agent.stats().lastError).toContain('has not settled after 5000 ms');
    await agent.stop();
  });

  it('polls commands while the uplink is saturated: batches and polls take turns', async () => {
    // Every request takes 50 ms, and 500 samples in batches of 10 keep the uplink wanting the lane for 2.5 s.
    const slow = (host: Host, clock: VirtualClock): Host => ({
      ...host,
      request: (req) => host.request(req).then((result) => new Promise((resolve) => clock.setTimer(50, () => resolve(result)))),
    });
    const { agent, service, clock } = setup({ actuators: [{ resource: 5, every: 100, handle: () => undefined }] }, { batch: 10 }, slow);
    const started = agent.start();
    await clock.advance(50);
    await started;
    for (const v of range(0, 500)) agent.record(1, v);
    await clock.advance(2_000);
    const polls = service.requests.filter((r) => r.url.includes('/feeds/last'));
    expect(polls.length).toBeGreaterThanOrEqual(10);
    await clock.advance(5_000);
    expect(service.stored(1)).toEqual(range(0, 500));
    const stopped = agent.stop();
    await clock.advance(100);
    await stopped;
  });
});

describe('stop() while the token is refused', () => {
  it('tries once at once rather than waiting out authRetryMs, and delivers everything once the token is accepted', async () => {
    const { agent, service, clock } = setup();
    await agent.start();
    const token = service.token;
    service.token = 'rotated';
    for (const v of range(0, 10)) agent.record(1, v);
    expect(await agent.flush()).toBe(false);
    expect(agent.stats().authPaused).toBe(true);
    service.token = token;
    const stopped = agent.stop({ timeoutMs: 1_000 });
    await clock.advance(0);
    expect((await stopped).queued).toBe(0);
    expect(service.stored(1)).toEqual(range(0, 10));
  });

  it('refused again, stops draining at once: what is queued stays', async () => {
    const { agent, service, clock } = setup();
    await agent.start();
    service.token = 'rotated';
    for (const v of range(0, 10)) agent.record(1, v);
    expect(await agent.flush()).toBe(false);
    const stopped = agent.stop({ timeoutMs: 60_000 });
    await clock.advance(0);
    expect(posts(service)).toHaveLength(2);
    expect((await stopped).queued).toBe(10);
    expect(clock.now()).toBe(0);
  });
});

describe('a resource that disappears', () => {
  it('costs a request once, not per sample: its samples are set aside at intake', async () => {
    const { agent, service, clock, setAside } = setup({}, { flushMs: 1_000 });
    await agent.start();
    service.resources.splice(0, 1);
    for (let i = 0; i < 80; i++) {
      agent.record(1, i);
      agent.record(2, i);
      await clock.advance(250);
    }
    await clock.advance(2_000);
    expect(service.stored(2)).toEqual(range(0, 80));
    expect(setAside.filter((s) => s.resource === 1)).toHaveLength(80);
    // 20 s of flushes every second; the first sample of the vanished resource costs at most two more.
    expect(posts(service).length).toBeLessThanOrEqual(24);
    await agent.stop();
    // Its next lookup was armed: stop() clears that timer with the others.
    expect(clock.pending).toBe(0);
  });

  it('is looked up again with backoff and comes back when the platform restores it', async () => {
    const { agent, service, clock, setAside } = setup({}, { flushMs: 1_000 });
    await agent.start();
    const removed = service.resources.splice(0, 1);
    const before = clock.now();
    agent.record(1, 1);
    await clock.advance(2_000);
    expect(setAside.map((s) => s.value)).toEqual([1]);
    const lookups = () => service.requests.filter((r) => r.url.endsWith('/resource/1?silent=true')).map((r) => r.at);
    // Operation 1 confirmed the 404 before the sample was set aside.
    expect(lookups()).toHaveLength(1);
    expect(agent.stats().setAsideBy).toEqual({ 1: 1 });
    // Then by the backoff of every retry ladder (backoff.ts), from a minute up to an hour: the k-th wait
    // at least half of 60 s·2^(k-1) and shorter than it.
    await clock.advance(30 * 60_000);
    const at = lookups();
    for (let k = 1; k < at.length; k++) {
      const ceiling = Math.min(3_600_000, 60_000 * 2 ** (k - 1));
      expect(at[k] - at[k - 1]).toBeGreaterThanOrEqual(ceiling / 2);
      expect(at[k] - at[k - 1]).toBeLessThan(ceiling);
    }
    // 30 s + 60 s + ... + 480 s fit in 30 minutes, and 60 s + ... + 480 s with the next 960 s do not.
    expect(at.length).toBeGreaterThanOrEqual(5);
    expect(at.length).toBeLessThanOrEqual(6);
    service.resources.unshift(...removed);
    await clock.advance(Math.max(60_000, clock.now() - before));
    expect(lookups().length).toBeGreaterThan(at.length);
    expect(agent.record(1, 2)).toBe('queued');
    await clock.advance(2_000);
    expect(service.stored(1)).toEqual([2]);
    expect(agent.stats().setAside).toBe(1);
    await agent.stop();
  });
});
