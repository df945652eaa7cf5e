// Presence, on the service's clock (which follows the virtual one): resources stay alive while the agent
// runs, through its flushes or, when it has nothing to send, its presence reads; they lapse once it stops.
import { atLeast, atMost, equal, ok } from './assert';
import type { ScenarioContext } from './context';
import { counter, creates, settle, startAgent } from './helpers';
import type { Scenario } from './run';
import { LIFETIME_MINUTES, R, SERVICE_EPOCH_MS } from './seed';

const LIFETIME_MS = LIFETIME_MINUTES * 60_000;

async function alive(ctx: ScenarioContext, resource: number): Promise<boolean> {
  const [record] = await ctx.service.resources([resource]);
  equal(record.is_dead, !record.is_alive, 'is_dead is the opposite of is_alive');
  return record.is_alive;
}

/** The service's timestamp form of a virtual time. */
function stamp(t: number): string {
  return new Date(SERVICE_EPOCH_MS + t).toISOString().slice(0, 19).replace('T', ' ');
}

export const presenceScenarios: Scenario[] = [
  {
    name: 'presence: presence reads keep an idle agent alive; it lapses after stop',
    async run(ctx) {
      const relay = { resource: R.relay, every: 10_000, handle: () => undefined };
      equal(await alive(ctx, R.relay), false, 'alive before the agent ran');
      const agent = await startAgent(ctx, { actuators: [relay] });
      equal(await alive(ctx, R.relay), true, 'alive after start');
      await ctx.clock.advance(300_000);
      const reads = ctx.requests.filter((r) => r.op === 'read');
      atLeast(reads.length, 10, 'non-silent reads in 5 minutes (the lookup, then presence reads)');
      ok(reads.every((r) => r.path.indexOf('silent') < 0), 'presence reads are not silent');
      for (let i = 1; i < reads.length; i++) atMost(reads[i].t - reads[i - 1].t, LIFETIME_MS / 2, 'gap between presence reads');
      equal(await alive(ctx, R.relay), true, 'alive after 5 idle minutes');
      await settle(ctx, agent.stop());
      await ctx.clock.advance(LIFETIME_MS + 1_000);
      equal(await alive(ctx, R.relay), false, 'alive a lifetime after stop');
    },
  },
  {
    name: 'presence: flushes keep a sending agent alive without presence reads',
    async run(ctx) {
      const b = counter(R.counterB, 5_000);
      const agent = await startAgent(ctx, { sensors: [b.sensor], uplink: { flushMs: 10_000 } });
      await ctx.clock.advance(120_500);
      equal(ctx.requests.filter((r) => r.op === 'read').length, 1, 'reads (the start-up lookup only)');
      const [record] = await ctx.service.resources([R.counterB]);
      equal([record.is_alive, record.lifetime_updated_at], [true, stamp(creates(ctx)[creates(ctx).length - 1].t)], '[is_alive, lifetime_updated_at]');
      await settle(ctx, agent.stop());
    },
  },
];
