// Commands: a feed another client creates on an actuator's resource (operation 3) reaches its handler
// once, parsed for the subtype, never twice; the feed already there at start only with applyCurrent.
import type { ActuatorConfig, SampleValue } from '../../src/core';
import { equal, ok } from './assert';
import type { ScenarioContext } from './context';
import { settle, startAgent } from './helpers';
import type { Scenario } from './run';
import { R } from './seed';

/** An actuator that records what it is handed. */
function actuator(resource: number, applyCurrent?: boolean): { config: ActuatorConfig; calls: SampleValue[] } {
  const calls: SampleValue[] = [];
  const config: ActuatorConfig = { resource, every: 1_000, handle: (value) => void calls.push(value) };
  if (applyCurrent !== undefined) config.applyCurrent = applyCurrent;
  return { config, calls };
}

async function runAgent(ctx: ScenarioContext, actuators: ActuatorConfig[], ms: number): Promise<number> {
  const agent = await startAgent(ctx, { actuators });
  await ctx.clock.advance(ms);
  return (await settle(ctx, agent.stop())).commands;
}

export const commandScenarios: Scenario[] = [
  {
    name: 'commands: each new feed reaches its handler once, parsed for its subtype',
    async run(ctx) {
      const relay = actuator(R.relay);
      const mode = actuator(R.mode);
      const agent = await startAgent(ctx, { actuators: [relay.config, mode.config] });
      await ctx.clock.advance(2_500);
      equal([relay.calls, mode.calls], [[], []], 'calls before any command');
      await ctx.service.create(R.relay, 1);
      await ctx.service.create(R.mode, 'on');
      await ctx.clock.advance(10_000);
      equal([relay.calls, mode.calls], [[true], ['on']], 'calls after one command each');
      await ctx.service.create(R.relay, 0);
      await ctx.clock.advance(10_000);
      equal([relay.calls, mode.calls], [[true, false], ['on']], 'calls after a second relay command');
      const stats = await settle(ctx, agent.stop());
      equal([stats.commands, stats.commandErrors], [3, 0], '[commands, commandErrors]');
      ok(
        ctx.requests.filter((r) => r.op === 'last').every((r) => r.path.indexOf('silent=true') >= 0),
        'command polls are silent',
      );
    },
  },
  {
    name: 'commands: the feed present at start runs only with applyCurrent, and once',
    async run(ctx) {
      await ctx.service.create(R.relay, 1);
      const off = actuator(R.relay);
      equal(await runAgent(ctx, [off.config], 5_000), 0, 'commands without applyCurrent');
      equal(off.calls, [], 'calls without applyCurrent');
      const on = actuator(R.relay, true);
      equal(await runAgent(ctx, [on.config], 5_000), 1, 'commands with applyCurrent');
      equal(on.calls, [true], 'calls with applyCurrent');
    },
  },
  {
    name: 'commands: a handler that throws is counted and does not stop polling',
    async run(ctx) {
      const calls: SampleValue[] = [];
      const failing: ActuatorConfig = {
        resource: R.relay,
        every: 1_000,
        handle: (value) => {
          calls.push(value);
          if (calls.length === 1) throw new Error('relay stuck');
        },
      };
      const agent = await startAgent(ctx, { actuators: [failing] });
      await ctx.service.create(R.relay, 1);
      await ctx.clock.advance(3_000);
      await ctx.service.create(R.relay, 0);
      await ctx.clock.advance(3_000);
      equal(calls, [true, false], 'calls');
      const stats = await settle(ctx, agent.stop());
      equal([stats.commands, stats.commandErrors], [2, 1], '[commands, commandErrors]');
      ok(ctx.logs.some((line) => line.indexOf('relay stuck') >= 0), 'the handler error is logged');
    },
  },
];
