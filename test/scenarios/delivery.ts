// Nothing accepted is lost: two sensors through a run of every fault the proxy can inject, then stop
// with flush. The service holds every reading, in order per resource, and none twice: every unknown
// outcome here came after the service stored the batch, and the read-back finds it.
import { MAX_SETTLE_MS, UPLINK_DEFAULTS } from '../../src/core/config';
import type { FaultAction } from '../support/fault-proxy';
import { atLeast, atMost, equal, ok } from './assert';
import { counter, holdsInOrder, settle, startAgent } from './helpers';
import type { Scenario } from './run';
import { R } from './seed';

const FAULTS: FaultAction[] = [
  { do: 'status', status: 503 },
  { do: 'reset', after: true },
  { do: 'hold', after: false },
  { do: 'malformed' },
  { do: 'status', status: 429, retryAfter: '2' },
  { do: 'hold', after: true },
  { do: 'reset', after: false },
  { do: 'status', status: 500 },
];


/** A flaky link: answers lost after the service stored the batch (reset, timeout, garbled), and a 503. */
const FLAKY: FaultAction[] = [{ do: 'reset', after: true }, { do: 'hold', after: true }, { do: 'malformed' }, { do: 'status', status: 503 }];

/**
 * How old a queued sample may grow at the default settings on that link: it waits for the oldest-age
 * flush (maxLatencyMs), its batch may time out once (timeoutMs) and be read back after the settle wait,
 * and a failed try backs off (the first two draws are under backoffBaseMs and twice it).
 */
const FLAKY_BOUND_MS = UPLINK_DEFAULTS.maxLatencyMs + UPLINK_DEFAULTS.timeoutMs + MAX_SETTLE_MS + 3 * UPLINK_DEFAULTS.backoffBaseMs;

export const deliveryScenarios: Scenario[] = [
  {
    name: 'delivery: under every fault each accepted sample is stored, in order per resource',
    async run(ctx) {
      const a = counter(R.counterA, 700);
      const b = counter(R.counterB, 1_100, 1_000_000);
      const agent = await startAgent(ctx, {
        sensors: [a.sensor, b.sensor],
        uplink: { batch: 20, flushMs: 3_000, timeoutMs: 4_000, backoffBaseMs: 500, backoffCapMs: 8_000 },
      });
      // Every fault, each followed by a request that passes.
      await ctx.faults(...FAULTS.flatMap((action) => [{ op: 'create' as const, action }, { op: 'create' as const, action: { do: 'pass' as const } }]));
      await ctx.clock.advance(90_000);
      const stats = await settle(ctx, agent.stop({ flush: true }));
      equal([stats.queued, stats.droppedOverflow, stats.rejectedInvalid, stats.setAside], [0, 0, 0, 0], '[queued, droppedOverflow, rejectedInvalid, setAside]');
      equal(stats.accepted, a.readings.length + b.readings.length, 'accepted: every reading');
      const outcomes = ctx.requests.filter((r) => r.op === 'create').map((r) => r.outcome);
      for (const seen of ['503', '429', '500', 'network', 'timeout']) ok(outcomes.indexOf(seen) >= 0, 'a ' + seen + ' was met');
      atLeast(stats.ambiguous, 1, 'ambiguous samples (answers lost after the service stored them)');
      equal([stats.reconciled, stats.unresolved], [stats.ambiguous, 0], '[reconciled, unresolved]: every one read back and found stored');
      await holdsInOrder(ctx, R.counterA, a.readings, 0);
      await holdsInOrder(ctx, R.counterB, b.readings, 0);
      equal((await ctx.service.stored()).length, stats.accepted, 'feeds stored: each accepted sample once');
    },
  },
  {
    name: 'delivery: at the default settings, on a flaky link that loses answers after the service stored them, every sample arrives within its bound, once',
    async run(ctx) {
      const a = counter(R.counterA, 1_000);
      const b = counter(R.counterB, 1_500, 1_000_000);
      // The defaults but for the start jitter (agentConfig moves the timed flushes away: bring them back).
      const agent = await startAgent(ctx, {
        sensors: [a.sensor, b.sensor],
        uplink: { flushMs: UPLINK_DEFAULTS.flushMs, maxLatencyMs: UPLINK_DEFAULTS.maxLatencyMs },
      });
      // Three rounds of the flaky faults, each followed by a request that passes.
      const round = FLAKY.flatMap((action) => [{ op: 'create' as const, action }, { op: 'create' as const, action: { do: 'pass' as const } }]);
      await ctx.faults(...round, ...round, ...round);
      let oldest = 0;
      for (let t = 0; t < 240_000; t += 1_000) {
        await ctx.clock.advance(1_000);
        oldest = Math.max(oldest, agent.stats().oldestAgeMs ?? 0);
      }
      atMost(oldest, FLAKY_BOUND_MS, 'oldest queued sample, ms');
      const stats = await settle(ctx, agent.stop({ flush: true }), UPLINK_DEFAULTS.timeoutMs + MAX_SETTLE_MS);
      equal([stats.queued, stats.droppedOverflow, stats.setAside, stats.unresolved], [0, 0, 0, 0], '[queued, droppedOverflow, setAside, unresolved]');
      equal(ctx.requests.filter((r) => r.op === 'create' && r.outcome === 'timeout').length, 3, 'timeouts met');
      atLeast(stats.ambiguous, 1, 'ambiguous samples');
      await holdsInOrder(ctx, R.counterA, a.readings, 0);
      await holdsInOrder(ctx, R.counterB, b.readings, 0);
      equal((await ctx.service.stored()).length, stats.accepted, 'feeds stored: each accepted sample once');
    },
  },
];
