// Start-up: a resource the device does not own is named at once; an unreachable service does not keep
// the agent from sampling, and the lookup is tried again until it succeeds, but not after stop().
import { createAgent } from '../../src/core';
import { atLeast, equal, ok, rejects } from './assert';
import { agentConfig, counter, drained, holdsInOrder, settle, startAgent } from './helpers';
import type { Scenario } from './run';
import { R } from './seed';

export const lifecycleScenarios: Scenario[] = [
  {
    name: 'start: a resource of another device is named in the rejection',
    async run(ctx) {
      const a = counter(R.counterA, 1_000);
      const foreign = counter(R.foreign, 1_000);
      const agent = createAgent(ctx.host, agentConfig(ctx, { sensors: [a.sensor, foreign.sensor] }));
      const message = await rejects(settle(ctx, agent.start()), 'start() with a foreign resource');
      ok(message.indexOf(String(R.foreign)) >= 0 && message.indexOf(String(R.counterA)) < 0, 'the message names ' + R.foreign + ' only: ' + message);
      await ctx.clock.advance(10_000);
      equal([a.readings.length, ctx.requests.filter((r) => r.op === 'create').length], [0, 0], '[readings, sends] after a failed start');
    },
  },
  {
    name: 'start: with the service unreachable it samples anyway and retries the lookup',
    async run(ctx) {
      await ctx.down(true);
      const a = counter(R.counterA, 1_000);
      const agent = await startAgent(ctx, { sensors: [a.sensor], lookupRetryMs: 5_000, uplink: { flushMs: 2_000 } });
      await ctx.clock.advance(12_000);
      atLeast(agent.stats().queued, 12, 'queued while unreachable');
      atLeast(ctx.requests.filter((r) => r.op === 'read' && r.outcome === 'network').length, 3, 'lookups tried while unreachable');
      await ctx.down(false);
      await drained(ctx, agent);
      // The queue may drain before the lookup's next try (lookupRetryMs): it succeeds then.
      ok(await ctx.clock.advanceUntil(() => ctx.requests.some((r) => r.op === 'read' && r.outcome === '200'), 5_000), 'the lookup succeeded once the service was back');
      const stats = await settle(ctx, agent.stop());
      await holdsInOrder(ctx, R.counterA, a.readings, stats.ambiguous);
      equal(stats.ambiguous, 0, 'ambiguous');
    },
  },
  {
    name: 'stop: no timer stays armed, even for a lookup retry in flight that fails after it',
    async run(ctx) {
      await ctx.down(true);
      const a = counter(R.counterA, 1_000);
      const commands: number[] = [];
      // A handler that never settles: its time limit is a timer of its own.
      const relay = { resource: R.relay, every: 1_000, handle: () => new Promise<void>(() => void commands.push(ctx.clock.now())) };
      const agent = await startAgent(ctx, { sensors: [a.sensor], actuators: [relay], uplink: { timeoutMs: 3_000 } });
      // Every lookup retry from now on is held until it times out; command polls are answered.
      await ctx.faults({ op: 'read', always: true, action: { do: 'hold', after: false } });
      await ctx.down(false);
      // A command is a feed newer than the first poll's answer.
      ok(await ctx.clock.advanceUntil(() => ctx.requests.some((r) => r.op === 'last' && r.outcome === '200'), 30_000), 'a command poll answered');
      await ctx.service.create(R.relay, 1);
      ok(await ctx.clock.advanceUntil(() => commands.length === 1 && ctx.inFlight('read') === 1, 60_000, 50), 'a command handed over, then a lookup retry in flight');
      await settle(ctx, agent.stop({ flush: false }));
      // Past the retry's timeout, and past any backoff the agent could still have armed.
      await ctx.clock.advance(4_000);
      equal(ctx.requests.filter((r) => r.op === 'read').map((r) => r.outcome).slice(-1), ['timeout'], 'the lookup retry in flight at stop()');
      // Sampler, uplink, command polls and handler limits, presence reads, vanished lookups, lookup retry: a
      // timer left armed would keep a Node process up after stop().
      equal(ctx.clock.pending, 0, 'timers armed after stop() and the end of the lookup in flight');
    },
  },
  {
    name: 'stop: during start, while its lookup is out, the agent does not start afterwards',
    async run(ctx) {
      const a = counter(R.counterA, 1_000);
      await ctx.faults({ op: 'read', times: 1, action: { do: 'hold', after: false } });
      const agent = createAgent(ctx.host, agentConfig(ctx, { sensors: [a.sensor], uplink: { timeoutMs: 3_000 } }));
      const started = agent.start();
      const stopped = agent.stop({ flush: false });
      await settle(ctx, Promise.all([started, stopped]));
      await ctx.clock.advance(5_000);
      equal([a.readings.length, agent.stats().queued, ctx.clock.pending], [0, 0, 0], '[readings, queued, timers] after stop() during start()');
    },
  },
];
