// Liveness under faults, at the agent's default reconciliation: the simulated device (`feed-agent
// simulate`, counters every 40 ms, batches of 50, flushMs 500, timeoutMs 1,000) against the local service
// through the fault proxy, which faults one operation-4 request in three with the mix of issue 15: 503,
// 429 with `Retry-After: 1`, a reset before the service stored the batch, a reset after it stored it, a
// garbled 200 after it stored it, a request held 1.5 s and then stored. Everything must be stored within
// the run and a few seconds of drain, nothing lost; when only answers are lost (resets and garbled 200s
// after the store), nothing stored twice. Counted from the service's side (tally.ts).
import { join } from 'node:path';
import { createRandom } from '../src/core/host/random';
import { COUNTERS, counterConfig, summaryOf } from '../test/e2e/support';
import type { FaultAction, FaultRule } from '../test/support/fault-proxy';
import { onRig } from './rig';
import { deliveryProblems } from './tally';
import type { Tally } from './tally';

const EVERY_MS = 40;
const UPLINK = { batch: 50, flushMs: 500, timeoutMs: 1_000 };

/** The faults of the report that opened issue 15; `late` lands 0.5 s after the 1 s timeout: 1.5 s after the request. */
const MIX: FaultAction[] = [
  { do: 'status', status: 503 },
  { do: 'status', status: 429, retryAfter: '1' },
  { do: 'reset', after: false },
  { do: 'reset', after: true },
  { do: 'malformed' },
  { do: 'late', ms: 500 },
];
/** Only lost answers: the service stored the batch, the agent cannot know it. */
const LOST_ANSWERS: FaultAction[] = [
  { do: 'reset', after: true },
  { do: 'malformed' },
];

export interface LivenessOptions {
  seed: number;
  /** How long the simulator samples, and how long its stop() may drain. */
  durationMs: number;
  drainMs: number;
  lostAnswersOnly: boolean;
  /** The built CLI (dist/cli.js or a test's build), and a fresh directory for the run's files. */
  cli: string;
  dir: string;
}

export interface LivenessReport {
  options: LivenessOptions;
  tallies: Tally[];
  creates: number;
  faults: number;
  exitCode: number | null;
  agent: { ambiguous: number; reconciled: number; unresolved: number; queued: number; droppedOverflow: number };
}

export async function runLiveness(o: LivenessOptions): Promise<LivenessReport> {
  const name = o.lostAnswersOnly ? 'liveness-lost' : 'liveness-mix';
  const durable = join(o.dir, name + '-durable');
  return onRig(join(o.dir, name + '.db'), durable, async ({ proxy, simulate }) => {
    proxy.faults(schedule(o));
    const config = counterConfig(o.dir, name + '.json', EVERY_MS, { uplink: UPLINK });
    const args = ['--config', config, '--durable', durable, '--json', '--duration', String(o.durationMs / 1000), '--drain-timeout', String(o.drainMs / 1000)];
    const sim = simulate(o.cli, args);
    // The faults go on through the drain: it must deliver under them too.
    const exitCode = await sim.exited;
    const agent = summaryOf(sim, ['ambiguous', 'reconciled', 'unresolved', 'queued', 'droppedOverflow']);
    let creates = 0;
    let faults = 0;
    for (const [action, count] of proxy.applied) {
      if (!action.startsWith('create ')) continue;
      creates += count;
      if (action !== 'create pass') faults += count;
    }
    return { options: o, creates, faults, exitCode, agent };
  });
}

/** One rule per operation-4 request: a fault from the mix for one in three, drawn from the seed. */
function schedule(o: LivenessOptions): FaultRule[] {
  const random = createRandom(o.seed);
  const mix = o.lostAnswersOnly ? LOST_ANSWERS : MIX;
  const rules: FaultRule[] = [];
  for (let i = 0; i < (o.durationMs + o.drainMs) / 10; i++) {
    rules.push({ op: 'create', action: random() < 1 / 3 ? mix[Math.floor(random() * mix.length)] : { do: 'pass' } });
  }
  return rules;
}

/** The guarantees the run broke, one line each. */
export function livenessProblems(r: LivenessReport): string[] {
  // Lost here means not stored after the run and the drain: the drain is part of the bound.
  const problems = deliveryProblems(r.tallies, r.agent.unresolved, r.exitCode);
  const all = r.tallies[r.tallies.length - 1];
  if (r.agent.droppedOverflow > 0) problems.push(r.agent.droppedOverflow + ' samples dropped by a full queue');
  if (r.options.lostAnswersOnly && all.duplicated > 0) problems.push(all.duplicated + ' duplicates although only answers were lost');
  if (r.faults === 0 || r.agent.reconciled === 0) problems.push('no fault was met and reconciled: the run proved nothing');
  return problems;
}

/** One paragraph and a table. */
export function livenessText(r: LivenessReport, table: (rows: readonly Tally[]) => string): string {
  const o = r.options;
  return [
    `Liveness, seed ${o.seed}${o.lostAnswersOnly ? ', only lost answers' : ', the fault mix of issue 15'}: ${COUNTERS.length} counters every ${EVERY_MS} ms ` +
      `for ${o.durationMs / 1000} s, drain ${o.drainMs / 1000} s; batches of ${UPLINK.batch}, flushMs ${UPLINK.flushMs}, timeoutMs ${UPLINK.timeoutMs}, ` +
      `reconciliation at its defaults; ${r.faults} of ${r.creates} operation-4 requests faulted.`,
    '',
    table(r.tallies),
    '',
    `The agent: ${r.agent.ambiguous} samples ambiguous, ${r.agent.reconciled} reconciled, ${r.agent.unresolved} unresolved, ` +
      `${r.agent.queued} still queued, ${r.agent.droppedOverflow} dropped; exit code ${r.exitCode}.`,
  ].join('\n');
}
