// What several scenarios share: an agent configuration whose flush triggers are off unless a scenario
// turns one on, an agent started on it, counting sensors, waiting in virtual time, and the delivery checks.
import { createAgent } from '../../src/core';
import { settleMs, uplinkSettings } from '../../src/core/config';
import type { Agent, AgentConfig, Host, InputValue, SensorConfig, TimerHandle, UplinkConfig } from '../../src/core';
import { AssertionError, atMost, equal, ok } from './assert';
import type { RequestRecord, ScenarioContext } from './context';
import type { FaultAction, FaultRule } from '../support/fault-proxy';
import type { Scenario } from './run';
import { R } from './seed';

type Extra = Partial<Omit<AgentConfig, 'uplink'>> & { uplink?: Partial<UplinkConfig> };

/**
 * A config against the scenario's proxy: fixed seed, no start jitter, timed flushes far away, and the
 * two counters as the resources a scenario may record() by hand.
 */
export function agentConfig(ctx: ScenarioContext, extra: Extra = {}): AgentConfig {
  return {
    url: ctx.url,
    publicKey: ctx.publicKey,
    token: ctx.token,
    seed: 7,
    resources: [R.counterA, R.counterB],
    ...extra,
    uplink: { startJitterMs: 0, flushMs: 600_000, maxLatencyMs: 600_000, ...extra.uplink },
  };
}

/** A sensor that counts up from `from`, so every reading is unique; `readings` lists what it gave. */
export function counter(resource: number, every: number, from = 1): { sensor: SensorConfig; readings: number[] } {
  const readings: number[] = [];
  let next = from;
  return {
    readings,
    sensor: {
      resource,
      every,
      read: () => {
        readings.push(next);
        return next++;
      },
    },
  };
}

/** Records `count` counter values from `from` by hand; every one must be accepted. */
export function recordRun(agent: Agent, resource: number, from: number, count: number): number[] {
  const values: number[] = [];
  for (let v = from; v < from + count; v++) {
    ok(agent.record(resource, v) === 'queued', 'record(' + resource + ', ' + v + ') was not queued');
    values.push(v);
  }
  return values;
}

/** Advances virtual time until `work` settles (at most `limitMs`); gives its value or throws its error. */
export async function settle<T>(ctx: Pick<ScenarioContext, 'clock'>, work: Promise<T>, limitMs = 120_000): Promise<T> {
  type Outcome = { value: T } | { error: unknown };
  let outcome: Outcome | null = null;
  work.then(
    (value) => void (outcome = { value }),
    (error: unknown) => void (outcome = { error }),
  );
  // Let what is due now run first, so work that needs no time settles without moving the clock.
  await ctx.clock.advance(0);
  await ctx.clock.advanceUntil(() => outcome !== null, limitMs);
  const final = outcome as Outcome | null;
  if (final === null) throw new AssertionError('still pending after ' + limitMs + ' ms of virtual time');
  if ('error' in final) throw final.error;
  return final.value;
}

/** Creates an agent with `agentConfig(ctx, extra)` and starts it (its lookup is a request, which may need virtual time). */
export async function startAgent(ctx: ScenarioContext, extra: Extra = {}): Promise<Agent> {
  const agent = createAgent(ctx.host, agentConfig(ctx, extra));
  await settle(ctx, agent.start());
  return agent;
}

/** Advances until the queue is empty, at most `limitMs`. */
export async function drained(ctx: ScenarioContext, agent: Agent, limitMs = 120_000): Promise<void> {
  ok(await ctx.clock.advanceUntil(() => agent.stats().queued === 0, limitMs), 'the queue still holds ' + agent.stats().queued + ' samples after ' + limitMs + ' ms');
}

/** The operation-4 requests the agent made. */
export function creates(ctx: ScenarioContext): RequestRecord[] {
  return ctx.requests.filter((r) => r.op === 'create');
}

/**
 * The service holds every value of `readings` for `resource`, first occurrences in reading order, and
 * no more repeats than `ambiguous` allows (a repeat is only possible after an unknown outcome).
 */
export async function holdsInOrder(ctx: ScenarioContext, resource: number, readings: InputValue[], ambiguous: number): Promise<void> {
  const stored = await ctx.service.values(resource);
  const firsts: InputValue[] = [];
  for (const v of stored) if (firsts.indexOf(v) < 0) firsts.push(v);
  equal(firsts, readings, 'resource ' + resource + ': distinct stored values in order');
  atMost(stored.length - firsts.length, ambiguous, 'resource ' + resource + ': repeated values');
}

/** What became of a batch whose request failed without a usable answer (see `lostAnswer`). */
export interface Fate {
  /** Samples counted ambiguous, reconciled and unresolved (0 when the outcome was known). */
  counts: [ambiguous: number, reconciled: number, unresolved: number];
  /** How often the service ends up holding the batch. */
  copies: 1 | 2;
  /** Transient failures the agent retried (default 1: the request itself). */
  retries?: number;
  /** Further rules for the proxy (a failing read-back). */
  rules?: FaultRule[];
  /** Done after the failure, before anything else reaches the service (another writer). */
  meanwhile?: (ctx: ScenarioContext) => Promise<unknown>;
  /** Uplink settings beside the scenario's timeout of 5 s. */
  uplink?: Partial<UplinkConfig>;
}

/**
 * A batch of five whose request fails without a usable answer (`action` on the proxy; its outcome as the
 * agent sees it: `timeout`, `network` or `200`), then everything is delivered; `fate` says how, a minute
 * after the queue emptied. When the outcome is unknown, the batch's next request is its read-back: at
 * once after a reset or a garbled answer, `reconcileAfterMs` (by default the timeout, at most 2.5 s)
 * after a timeout.
 */
export function lostAnswer(name: string, action: FaultAction, outcome: 'timeout' | 'network' | '200', fate: Fate = { counts: [0, 0, 0], copies: 1 }): Scenario {
  return {
    name,
    async run(ctx) {
      const config = agentConfig(ctx, { uplink: { timeoutMs: 5_000, ...fate.uplink } });
      const agent = createAgent(ctx.host, config);
      await settle(ctx, agent.start());
      await ctx.faults({ op: 'create', action }, ...(fate.rules ?? []));
      const values = recordRun(agent, R.counterA, 1, 5);
      equal(await settle(ctx, agent.flush()), false, 'flush() result');
      const first = creates(ctx)[0];
      equal(first.outcome, outcome, 'outcome of the first attempt');
      if (outcome === 'timeout') equal(first.end - first.t, 5_000, 'virtual ms until the timeout');
      await fate.meanwhile?.(ctx);
      await drained(ctx, agent);
      // A minute more: long enough for a late commit to land.
      await ctx.clock.advance(60_000);
      if (fate.counts[0] > 0) {
        // Presence reads may come between; the batch's next request is its read-back.
        const next = ctx.requests.slice(ctx.requests.indexOf(first) + 1).find((r) => r.op === 'create' || r.op === 'last')!;
        equal([next.op, next.path.endsWith('?silent=true')], ['last', true], '[op, silent] of the batch\'s request after the failure');
        const wait = outcome === 'timeout' ? settleMs(uplinkSettings(config)) : 0;
        equal(next.t - first.end, wait, 'virtual ms before the read-back');
      }
      const stats = agent.stats();
      equal([stats.sent, stats.retries], [5, fate.retries ?? 1], '[sent, retries]');
      equal([stats.ambiguous, stats.reconciled, stats.unresolved], fate.counts, '[ambiguous, reconciled, unresolved]');
      await holdsInOrder(ctx, R.counterA, values, 5 * (fate.copies - 1));
      equal((await ctx.service.values(R.counterA)).length, 5 * fate.copies, 'feeds stored');
      await settle(ctx, agent.stop());
    },
  };
}

/** A host that goes dead at `kill()`, as a killed process does: no timer fires, no answer arrives. */
export function killable(host: Host): { host: Host; kill: () => void } {
  let dead = false;
  const timers: TimerHandle[] = [];
  return {
    host: {
      ...host,
      request: (req) => new Promise((resolve) => void host.request(req).then((r) => !dead && resolve(r))),
      setTimer: (ms, fn) => {
        const t = host.setTimer(ms, () => !dead && fn());
        timers.push(t);
        return t;
      },
      log: (level, message) => !dead && host.log?.(level, message),
    },
    kill: () => {
      dead = true;
      for (const t of timers) host.clearTimer(t);
    },
  };
}
