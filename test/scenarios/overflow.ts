// A full queue while the service is unreachable: each overflow policy keeps exactly what it promises,
// the counters say so, and the service ends up holding exactly that.
import type { OverflowPolicy } from '../../src/core';
import { equal } from './assert';
import { creates, holdsInOrder, settle, startAgent } from './helpers';
import type { Scenario } from './run';
import { R } from './seed';

function overflow(policy: OverflowPolicy, kept: number[], results: string[]): Scenario {
  return {
    name: 'overflow: ' + policy + ' with the service unreachable',
    async run(ctx) {
      const agent = await startAgent(ctx, { uplink: { queue: 16, batch: 10, overflow: policy } });
      await ctx.down(true);
      const accepted: string[] = [];
      // 30 samples into 16 places, with failed attempts to send in between.
      for (let v = 1; v <= 30; v++) {
        accepted.push(agent.record(R.counterA, v));
        await ctx.clock.advance(100);
      }
      equal(accepted, results, 'record() results');
      const stats = agent.stats();
      equal([stats.queued, stats.highWater, stats.droppedOverflow, stats.ambiguous], [16, 16, 14, 0], '[queued, highWater, droppedOverflow, ambiguous]');
      equal(creates(ctx).some((r) => r.outcome === 'network'), true, 'sending was tried while down');
      await ctx.down(false);
      equal(await settle(ctx, agent.flush()), true, 'flush() once the service is back');
      equal([agent.stats().sent, agent.stats().queued], [16, 0], '[sent, queued]');
      await holdsInOrder(ctx, R.counterA, kept, 0);
      equal((await ctx.service.values(R.counterA)).length, 16, 'feeds stored');
      await settle(ctx, agent.stop());
    },
  };
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

export const overflowScenarios: Scenario[] = [
  overflow('drop-oldest', range(15, 30), range(1, 30).map(() => 'queued')),
  overflow('drop-newest', range(1, 16), range(1, 30).map((v) => (v <= 16 ? 'queued' : 'full'))),
];
