// Each flush trigger on its own: batch full, flushMs, maxLatencyMs, flush(), stop({flush: true}).
import { equal, ok } from './assert';
import { counter, creates, holdsInOrder, recordRun, settle, startAgent } from './helpers';
import type { Scenario } from './run';
import { R } from './seed';

export const flushScenarios: Scenario[] = [
  {
    name: 'flush: a full batch leaves at once, a partial one waits',
    async run(ctx) {
      const agent = await startAgent(ctx, { uplink: { batch: 10 } });
      await ctx.clock.advance(1_000);
      const values = recordRun(agent, R.counterA, 1, 19);
      await ctx.clock.advance(0);
      equal(creates(ctx).map((r) => [r.t, r.elements]), [[1_000, 10]], 'operation-4 requests [t, elements]');
      await ctx.clock.advance(60_000);
      equal(creates(ctx).length, 1, 'requests once 9 samples wait');
      equal(agent.stats().queued, 9, 'queued');
      await holdsInOrder(ctx, R.counterA, values.slice(0, 10), 0);
      await settle(ctx, agent.stop({ flush: false }));
    },
  },
  {
    name: 'flush: flushMs sends a partial batch on schedule',
    async run(ctx) {
      const a = counter(R.counterA, 1_000);
      const agent = await startAgent(ctx, { sensors: [a.sensor], uplink: { flushMs: 5_000 } });
      await ctx.clock.advance(15_500);
      equal(creates(ctx).map((r) => r.t), [5_000, 10_000, 15_000], 'times of the operation-4 requests');
      ok(creates(ctx).every((r) => r.elements >= 5 && r.elements <= 6), 'each carries the 5 or 6 samples of its period');
      await settle(ctx, agent.stop({ flush: true }));
      await holdsInOrder(ctx, R.counterA, a.readings, 0);
    },
  },
  {
    name: 'flush: maxLatencyMs bounds the wait of the oldest sample',
    async run(ctx) {
      const a = counter(R.counterA, 10_000);
      const agent = await startAgent(ctx, { sensors: [a.sensor], uplink: { flushMs: 60_000, maxLatencyMs: 3_000 } });
      await ctx.clock.advance(25_000);
      equal(creates(ctx).map((r) => [r.t, r.elements]), [[3_000, 1], [13_000, 1], [23_000, 1]], 'operation-4 requests [t, elements]');
      await settle(ctx, agent.stop({ flush: true }));
      await holdsInOrder(ctx, R.counterA, a.readings, 0);
    },
  },
  {
    name: 'flush: flush() sends what is queued now',
    async run(ctx) {
      const agent = await startAgent(ctx);
      const values = recordRun(agent, R.counterB, 100, 7);
      equal(await settle(ctx, agent.flush()), true, 'flush() result');
      equal(creates(ctx).map((r) => [r.t, r.elements]), [[0, 7]], 'operation-4 requests [t, elements]');
      const stats = agent.stats();
      equal([stats.queued, stats.sent, stats.batches], [0, 7, 1], '[queued, sent, batches]');
      ok(agent.canSleep(), 'canSleep() once the queue is empty');
      await holdsInOrder(ctx, R.counterB, values, 0);
      equal(await settle(ctx, agent.flush()), true, 'flush() of an empty queue');
      equal(creates(ctx).length, 1, 'an empty flush sends nothing');
      await settle(ctx, agent.stop());
    },
  },
  {
    name: 'flush: stop({flush: true}) delivers the whole queue in batches',
    async run(ctx) {
      const agent = await startAgent(ctx, { uplink: { batch: 10 } });
      const values = recordRun(agent, R.counterA, 1, 25);
      const stats = await settle(ctx, agent.stop({ flush: true }));
      equal([stats.queued, stats.sent, stats.batches], [0, 25, 3], '[queued, sent, batches]');
      equal(creates(ctx).map((r) => r.elements), [10, 10, 5], 'elements per request');
      await holdsInOrder(ctx, R.counterA, values, 0);
      equal(agent.record(R.counterA, 26), 'refused', 'record() after stop');
    },
  },
];
