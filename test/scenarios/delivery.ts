// Nothing accepted is lost: two sensors through a run of every fault the proxy can inject, then stop
// with flush. The service holds every reading, in order per resource, and none twice: every unknown
// outcome here came after the service stored the batch, and the read-back finds it.
import type { FaultAction } from '../support/fault-proxy';
import { atLeast, equal, ok } from './assert';
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
];
