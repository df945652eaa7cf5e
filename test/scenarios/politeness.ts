// A platform that fails below the answers is never hammered (issue 38): in a partial outage, where every
// batch is reset once it is in and reads are answered, each failing cycle (the batch, its read-back)
// waits the backoff, longer each time; when the outage ends, everything arrives, once or counted. The
// proxy's `lose` is such a reset: the request is taken and the connection dropped, nothing stored.
import { UPLINK_DEFAULTS } from '../../src/core/config';
import { resumeBound, waitsWithin } from '../../src/core/requests/backoff';
import { atMost, equal, ok } from './assert';
import { counter, creates, holdsInOrder, settle, startAgent } from './helpers';
import type { Scenario } from './run';
import { R } from './seed';

const OUTAGE_MS = 20_000;
const LADDER = { baseMs: UPLINK_DEFAULTS.backoffBaseMs, capMs: UPLINK_DEFAULTS.backoffCapMs };

export const politenessScenarios: Scenario[] = [
  {
    name: 'politeness: 20 s of a partial outage (writes reset once in, reads answered) cost a batch and a read-back per growing wait, then everything arrives',
    async run(ctx) {
      const a = counter(R.counterA, 1_000);
      // The default flush and latency, not the scenarios' quiet ones.
      const agent = await startAgent(ctx, { sensors: [a.sensor], uplink: { flushMs: UPLINK_DEFAULTS.flushMs, maxLatencyMs: UPLINK_DEFAULTS.maxLatencyMs } });
      await ctx.clock.advance(15_000);
      const from = ctx.clock.now();
      await ctx.faults({ op: 'create', always: true, action: { do: 'lose' } });
      await ctx.clock.advance(OUTAGE_MS);
      await ctx.clearFaults();
      const during = ctx.requests.filter((r) => r.t >= from && r.t < from + OUTAGE_MS);
      // A batch and its read-back, once before the first wait and once after each wait that fits.
      const budget = 2 * (1 + waitsWithin(LADDER, OUTAGE_MS));
      atMost(during.length, budget, 'requests in the 20 s of the outage: ' + during.map((r) => r.t - from + ' ' + r.op).join(', '));
      atMost(during.length, 15, 'requests in the 20 s (the issue\'s bound)');
      const posts = during.filter((r) => r.op === 'create');
      for (let k = 2; k < posts.length; k++) {
        ok(posts[k].t - posts[k - 1].t > posts[k - 1].t - posts[k - 2].t - 1_000, 'the waits grow: ' + posts.map((r) => r.t - from).join(', '));
      }
      // After the outage: the next batch within the backoff's bound, and stored.
      const end = from + OUTAGE_MS;
      ok(await ctx.clock.advanceUntil(() => creates(ctx).some((r) => r.t >= end && r.outcome === '200'), resumeBound(LADDER, OUTAGE_MS) + 1_000), 'a batch stored after the outage');
      const stats = await settle(ctx, agent.stop());
      equal(stats.queued, 0, 'queued after stop');
      await holdsInOrder(ctx, R.counterA, a.readings, stats.unresolved);
    },
  },
];
