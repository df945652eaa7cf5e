// The delivery engine under an unknown outcome: how long delivery stops after it (`engine.stallAfterUnknownMs`),
// p50 and max, at the default settings. The agent runs on a virtual clock against the real local service
// through the fault proxy (the scenarios' backend); a counter reads every 100 ms. Once a batch has gone
// through, the next operation-4 request meets one of the ways an outcome is lost, and the stall is the
// virtual time from the moment the agent knew the outcome was unknown (the failure's end) until samples
// leave the queue again (a read-back showed them stored, or a batch was acknowledged). Before issue 15
// every unknown outcome held the queue for `reconcileAfterMs`, 30 s by default: the baseline.
import { createAgent } from '../src/core';
import { counter } from '../test/scenarios/helpers';
import { createContext } from '../test/scenarios/context';
import { R } from '../test/scenarios/seed';
import type { FaultAction } from '../test/support/fault-proxy';
import { nodeLink, withBackend } from '../test/support/scenario-backend';
import { percentile } from './measure';
import type { BenchSection } from './section';

/** The default `reconcileAfterMs` before issue 15: every unknown outcome waited this long. */
const BEFORE_MS = 30_000;
const SEEDS = 5;
/** The ways an outcome is lost: resets after and before the store, a garbled 200, a lost request, timeouts. */
const UNKNOWN: FaultAction[] = [
  { do: 'reset', after: true },
  { do: 'reset', after: false },
  { do: 'malformed' },
  { do: 'lose' },
  { do: 'hold', after: true },
  { do: 'late', ms: 1_000 },
];

/** One run: the stall after `action`, in virtual ms. */
async function stall(action: FaultAction, seed: number): Promise<number> {
  return withBackend(async (backend) => {
    const ctx = createContext(nodeLink(backend), backend.url);
    const { sensor } = counter(R.counterA, 100);
    const agent = createAgent(ctx.host, { url: ctx.url, publicKey: ctx.publicKey, token: ctx.token, seed, sensors: [sensor] });
    const started = agent.start();
    await ctx.clock.advanceUntil(() => agent.stats().sent > 0, 60_000);
    await started;
    await ctx.faults({ op: 'create', action });
    // The fault meets the next operation-4 request (a garbled answer is a 200 too), and nothing is sent before it.
    const before = ctx.requests.length;
    const sent = agent.stats().sent;
    const failed = () => ctx.requests.slice(before).find((r) => r.op === 'create');
    await ctx.clock.advanceUntil(() => failed() !== undefined, 60_000, 10);
    const from = failed()!.end;
    if (!(await ctx.clock.advanceUntil(() => agent.stats().sent > sent, 120_000, 10))) throw new Error('delivery did not resume after ' + JSON.stringify(action));
    const stalled = ctx.clock.now() - from;
    const stopped = agent.stop();
    await ctx.clock.advanceUntil(() => agent.stats().queued === 0, 60_000);
    await ctx.clock.advance(1_000);
    await stopped;
    return stalled;
  });
}

export async function benchEngine(): Promise<BenchSection> {
  const stalls: number[] = [];
  for (const action of UNKNOWN) for (let seed = 1; seed <= SEEDS; seed++) stalls.push(await stall(action, seed));
  stalls.sort((a, b) => a - b);
  const figures = {
    'engine.stallAfterUnknownMs.p50': percentile(stalls, 50),
    'engine.stallAfterUnknownMs.max': stalls[stalls.length - 1],
    'engine.stallAfterUnknownMs.before': BEFORE_MS,
  };
  return {
    title: 'Delivery engine: delivery stopped after an unknown outcome, default settings (virtual time, real service through the fault proxy)',
    note: `${UNKNOWN.length} kinds of lost outcome × ${SEEDS} seeds; baseline: the ${BEFORE_MS / 1000} s every unknown outcome waited before issue 15 (the old default reconcileAfterMs), not measured`,
    figures,
    rows: [
      { label: 'stall after an unknown outcome, p50 (engine.stallAfterUnknownMs)', value: figures['engine.stallAfterUnknownMs.p50'], baseline: BEFORE_MS, unit: 'ms' },
      { label: 'stall after an unknown outcome, max', value: figures['engine.stallAfterUnknownMs.max'], baseline: BEFORE_MS, unit: 'ms' },
    ],
  };
}
