// Report by exception: a rule per resource decides which samples are queued. A contact read every second
// is reported when it changes and on a heartbeat; a meter's total when it moved a deadband, at most once a
// minimum interval; a gauge as the mean of the samples between reports. What the service stores is
// exactly those reports, in order.
import type { ReportConfig, SampleValue } from '../../src/core';
import { createAgent } from '../../src/core';
import { equal } from './assert';
import type { ScenarioContext } from './context';
import { agentConfig, settle } from './helpers';
import type { Scenario } from './run';
import { R } from './seed';

/** Runs an agent with one sensor read every second for `seconds`, under `rule`; answers what the service stored and the agent's counts. */
async function run(ctx: ScenarioContext, resource: number, read: (t: number) => SampleValue, rule: Omit<ReportConfig, 'resource'>, seconds: number) {
  const sensor = { resource, every: 1_000, read: () => read(Math.round(ctx.clock.now() / 1_000)) };
  const agent = createAgent(ctx.host, agentConfig(ctx, { sensors: [sensor], reporting: [{ resource, ...rule }] }));
  await settle(ctx, agent.start());
  await ctx.clock.advance(seconds * 1_000 - 1);
  equal(await settle(ctx, agent.flush()), true, 'flush()');
  const stats = await settle(ctx, agent.stop());
  return { stored: await ctx.service.values(resource), stats };
}

export const exceptionScenarios: Scenario[] = [
  {
    name: 'report by exception: a contact read every second goes on change and on its heartbeat',
    async run(ctx) {
      // Closed, open from 125 s to 300 s, closed again; a heartbeat every 120 s.
      const { stored, stats } = await run(ctx, R.relay, (t) => t >= 125 && t < 300, { deadband: 0, heartbeatMs: 120_000 }, 400);
      // 0 s closed; 120 s heartbeat; 125 s opened; 245 s heartbeat; 300 s closed.
      equal(stored, [false, false, true, true, false], 'stored values');
      equal([stats.sent, stats.heldBack], [5, 400 - 3], '[sent, heldBack]');
    },
  },
  {
    name: 'report by exception: a meter total goes when it moved its deadband, at most once a minute',
    async run(ctx) {
      const { stored, stats } = await run(ctx, R.counterA, (t) => 1000 + t, { deadband: 10, minIntervalMs: 60_000, heartbeatMs: 900_000 }, 300);
      // Every sample moves it; the minimum interval holds each change until its end, when the newest
      // value goes (the one sampled a second before), and the next interval counts from that sample.
      equal(stored, [1000, 1059, 1118, 1177, 1236, 1295], 'stored values');
      equal(stats.sent, 6, 'sent');
    },
  },
  {
    name: 'report by exception: a gauge goes as the mean of the samples since its last report',
    async run(ctx) {
      // 0, 1, …, 9, 0, 1, …: every 10.5 s the mean of the ten samples since the last report.
      const { stored } = await run(ctx, R.percent, (t) => t % 10, { minIntervalMs: 10_500, aggregate: 'mean' }, 41);
      equal(stored, [0, 4.5, 4.5, 4.5, 4.5], 'stored values');
    },
  },
];
