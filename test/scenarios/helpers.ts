// What several scenarios share: an agent configuration whose flush triggers are off unless a scenario
// turns one on, an agent started on it, counting sensors, waiting in virtual time, and the delivery checks.
import { createAgent } from '../../src/core';
import type { Agent, AgentConfig, InputValue, SensorConfig, UplinkConfig } from '../../src/core';
import { AssertionError, atMost, equal, ok } from './assert';
import type { RequestRecord, ScenarioContext } from './context';
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
    ok(agent.record(resource, v), 'record(' + resource + ', ' + v + ') was refused');
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
