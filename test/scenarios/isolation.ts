// One element the service refuses in a batch of 100: it is found with few extra requests, set aside
// (and reported), and every other sample is stored once, in order.
import type { SetAside } from '../../src/core';
import { atMost, equal } from './assert';
import type { ScenarioContext } from './context';
import { creates, drained, holdsInOrder, recordRun, settle, startAgent } from './helpers';
import type { Scenario } from './run';
import { R } from './seed';

/** ⌈log2 100⌉ + 1: the most requests isolation may add to the one the batch needs anyway. */
const MAX_EXTRA = 8;

/**
 * Queues 100 samples of counterA with `bad` (a sample of `resource`) at index `at`, lets the agent
 * deliver them, and checks the outcome. Returns the number of operation-4 requests it took.
 */
async function isolate(ctx: ScenarioContext, resource: number, bad: number, at: number): Promise<number> {
  const setAside: SetAside[] = [];
  // The agent looks the resource's subtype up at start and checks `bad` against it before queuing it.
  const resources = [R.counterA, resource];
  const agent = await startAgent(ctx, { resources, onSetAside: (item) => void setAside.push(item) });
  const good = recordRun(agent, R.counterA, 1, at);
  equal(agent.record(resource, bad), 'queued', 'record() of the element the service will refuse');
  good.push(...recordRun(agent, R.counterA, at + 1, 99 - at));
  await drained(ctx, agent);
  const requests = creates(ctx).length;
  atMost(requests - 1, MAX_EXTRA, 'extra operation-4 requests');
  equal(setAside.map((s) => [s.resource, s.value]), [[resource, bad]], 'set aside [resource, value]');
  const stats = agent.stats();
  equal([stats.sent, stats.setAside, stats.queued, stats.ambiguous], [99, 1, 0, 0], '[sent, setAside, queued, ambiguous]');
  await holdsInOrder(ctx, R.counterA, good, 0);
  equal(await ctx.service.values(resource), [], 'stored values of the refused element\'s resource');
  await settle(ctx, agent.stop());
  return requests;
}

export const isolationScenarios: Scenario[] = [
  {
    name: 'isolation: the element the service names (element N:) is set aside, the rest flows',
    async run(ctx) {
      // The service's percent subtype takes [0, 100]; the agent is told [0, 1000], so 500 passes its own
      // check and the real service refuses it with 422 `element 37: ...`.
      await ctx.faults({ op: 'read', always: true, action: { do: 'widen', resource: R.percent, begin: 0, end: 1_000 } });
      const requests = await isolate(ctx, R.percent, 500, 37);
      equal(creates(ctx).map((r) => [r.elements, r.outcome]), [[100, '422'], [37, '200'], [62, '200']], '[elements, outcome] per request');
      equal(requests, 3, 'operation-4 requests');
    },
  },
  {
    name: 'isolation: bisection finds an element refused without its index',
    async run(ctx) {
      await ctx.faults({ op: 'create', always: true, action: { do: 'reject', resource: R.counterB, input: 4242, naming: false } });
      await isolate(ctx, R.counterB, 4242, 73);
    },
  },
  {
    name: 'isolation: entries of a {success, failed} answer are set aside, the rest is stored',
    async run(ctx) {
      const setAside: SetAside[] = [];
      const agent = await startAgent(ctx, { onSetAside: (item) => void setAside.push(item) });
      await ctx.faults({ op: 'create', action: { do: 'failed', indices: [3, 50] } });
      const values = recordRun(agent, R.counterA, 1, 100);
      await drained(ctx, agent);
      equal(creates(ctx).map((r) => [r.elements, r.outcome]), [[100, '200']], '[elements, outcome] per request');
      equal(setAside.map((s) => [s.resource, s.value]), [[R.counterA, 4], [R.counterA, 51]], 'set aside [resource, value]');
      const stats = agent.stats();
      equal([stats.sent, stats.setAside, stats.queued], [98, 2, 0], '[sent, setAside, queued]');
      await holdsInOrder(ctx, R.counterA, values.filter((v) => v !== 4 && v !== 51), 0);
      await settle(ctx, agent.stop());
    },
  },
  {
    // A 404 for an element may be the platform's passing mistake: before any reading is thrown away, the
    // resource is read (operation 1); it exists, so nothing is set aside and every reading is stored once.
    name: 'isolation: a transient 404 for an element sets nothing aside: operation 1 finds the resource, and its readings go again',
    async run(ctx) {
      const setAside: SetAside[] = [];
      const agent = await startAgent(ctx, { onSetAside: (item) => void setAside.push(item) });
      await ctx.faults({ op: 'create', action: { do: 'status', status: 404, message: 'element 3: resource ' + R.counterA + ' not found' } });
      const values = recordRun(agent, R.counterA, 1, 10);
      await settle(ctx, agent.flush());
      await drained(ctx, agent, 10_000);
      const more = recordRun(agent, R.counterA, 11, 5);
      await settle(ctx, agent.flush());
      equal(setAside.map((s) => [s.resource, s.value]), [], 'set aside [resource, value]');
      const lookups = ctx.requests.filter((r) => r.op === 'read' && r.path.indexOf('/resource/') >= 0);
      equal(lookups.map((r) => r.outcome), ['200'], 'operation-1 lookups of the resource');
      const stats = agent.stats();
      equal([stats.sent, stats.setAside, stats.queued], [15, 0, 0], '[sent, setAside, queued]');
      await holdsInOrder(ctx, R.counterA, values.concat(more), 0);
      await settle(ctx, agent.stop());
    },
  },
];
