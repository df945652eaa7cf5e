// The fault soak: the simulated device (`feed-agent simulate`, a child process with its durable queue)
// against the real local service through the fault proxy on 127.0.0.1, with every kind of fault mixed in
// at random (seeded) and one outage longer than the flush interval. What came of it is counted from the
// service's side (tally.ts); the agent's own counts only say how many outcomes were unknown, reconciled
// and unresolved.
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRandom } from '../src/core/host/random';
import { COUNTERS, counterConfig, summaryOf } from '../test/e2e/support';
import { actionName } from '../test/support/fault-proxy';
import type { FaultAction, FaultRule } from '../test/support/fault-proxy';
import { onRig } from './rig';
import { deliveryProblems } from './tally';
import type { Tally } from './tally';

/** Each counter reads every 40 ms, as in the report that opened issue 9. */
const EVERY_MS = 40;
// Each unknown outcome holds the queue for up to timeoutMs + reconcileAfterMs (3 s, 225 samples, with
// the defaults below); batches of 50 (a request every 0.7 s) catch up with that at the fault rates of the
// long run. The queue holds an outage of 10 s and what follows it (the soak is for faults, overflow has
// its own run), and backoff is capped at 2 s rather than waiting out the default two-minute cap.
const UPLINK = {
  batch: 50,
  queue: 4096,
  flushMs: 1_000,
  maxLatencyMs: 2_000,
  timeoutMs: 1_000,
  backoffBaseMs: 200,
  backoffCapMs: 2_000,
};

/** Operation 4's faults: every kind a network or a server can do to it; a late commit lands `lateMs` after the agent gave up. */
const createFaults = (lateMs: number): FaultAction[] => [
  { do: 'status', status: 503 },
  { do: 'status', status: 500 },
  { do: 'status', status: 429, retryAfter: '1' },
  { do: 'reset', after: false },
  { do: 'reset', after: true },
  { do: 'hold', after: false },
  { do: 'hold', after: true },
  { do: 'malformed' },
  { do: 'lose' },
  { do: 'late', ms: lateMs },
  { do: 'slow', ms: 300 },
];
/** The read-backs' faults (operation 6): each leaves its batch undecided. */
const READ_FAULTS: FaultAction[] = [
  { do: 'status', status: 503 },
  { do: 'reset', after: true },
  { do: 'hold', after: true },
  { do: 'malformed' },
];
/**
 * The create faults after which the agent cannot know whether the service stored the batch: all but an
 * error status (nothing forwarded) and a slow answer (it arrives), by the names the proxy's tally uses.
 */
const UNKNOWN = new Set(createFaults(0).filter((a) => a.do !== 'status' && a.do !== 'slow').map(actionName));

export interface FaultSoakOptions {
  seed: number;
  /** One operation-4 request in this many gets a fault (7 in the report that opened issue 9). */
  createOneIn: number;
  /** One read-back in this many gets a fault. */
  readOneIn: number;
  /** How long the simulator samples. */
  durationMs: number;
  /** The outage, at 40 % of the run: the proxy refuses connections and breaks the open ones. */
  outageMs: number;
  /**
   * The agent's read-back waits this long after an unknown outcome (default 2 s: the local service settles
   * at once), and a late commit lands `lateMs` after the agent gave up (default 1 s). The late commit must
   * land before the read-back, or the batch goes again undecided yet uncounted: the margin between the two
   * is what a busy machine may delay the proxy and the service by (both run in the calling process).
   */
  reconcileAfterMs?: number;
  lateMs?: number;
  /** The built CLI (dist/cli.js or a test's build). */
  cli: string;
  /** A fresh directory for the database, the config and the durable queue. */
  dir: string;
}

/** The defaults of the options that have one (FaultSoakOptions). */
const TIMING = { reconcileAfterMs: 2_000, lateMs: 1_000 };

export interface FaultSoakReport {
  options: Required<FaultSoakOptions>;
  /** Per counter resource, then all of them: counted from the service's side. */
  tallies: Tally[];
  /** Operation-4 requests the proxy saw, and the faults it applied (`create lose`, `last status 503`). */
  creates: number;
  faults: Record<string, number>;
  /** Operation-4 requests whose outcome the agent could not know. */
  unknownRequests: number;
  /** The agent's summary: its exit code and counts. */
  exitCode: number | null;
  agent: { ambiguous: number; reconciled: number; unresolved: number; retries: number; requests: number; droppedOverflow: number; queued: number };
}

export async function runFaultSoak(options: FaultSoakOptions): Promise<FaultSoakReport> {
  const o = { ...TIMING, ...options };
  const durable = join(o.dir, 'durable');
  return onRig(join(o.dir, 'soak.db'), durable, async ({ proxy, simulate }) => {
    proxy.faults(schedule(o));
    const config = counterConfig(o.dir, 'soak.json', EVERY_MS, { uplink: { ...UPLINK, reconcileAfterMs: o.reconcileAfterMs } });
    const seconds = String(o.durationMs / 1000);
    const sim = simulate(o.cli, ['--config', config, '--durable', durable, '--json', '--duration', seconds, '--drain-timeout', '120']);
    await sleep(0.4 * o.durationMs);
    await proxy.setDown(true);
    proxy.dropConnections();
    await sleep(o.outageMs);
    await proxy.setDown(false);
    // The faults end with the sampling, so that the drain ends too.
    await sim.next((e) => e.type === 'stopping', o.durationMs + 60_000);
    proxy.clearFaults();
    const exitCode = await sim.exited;
    const agent = summaryOf(sim, ['ambiguous', 'reconciled', 'unresolved', 'retries', 'requests', 'droppedOverflow', 'queued']);
    const faults: Record<string, number> = {};
    let creates = 0;
    let unknownRequests = 0;
    for (const [name, count] of proxy.applied) {
      const space = name.indexOf(' ');
      const op = name.slice(0, space);
      const action = name.slice(space + 1);
      if (op === 'create') creates += count;
      if (op === 'create' && UNKNOWN.has(action)) unknownRequests += count;
      if (action !== 'pass') faults[name] = count;
    }
    return { options: o, creates, faults, unknownRequests, exitCode, agent };
  });
}

/**
 * The proxy's rules, one per request in order: a pass, or now and then a fault drawn from the seed. More
 * than the run can use (a request every 10 ms at most); after them everything passes.
 */
function schedule(o: Required<FaultSoakOptions>): FaultRule[] {
  const random = createRandom(o.seed);
  const rules: FaultRule[] = [];
  const pick = (op: 'create' | 'last', oneIn: number, faults: FaultAction[]): void => {
    for (let i = 0; i < o.durationMs / 10; i++) {
      const action = random() < 1 / oneIn ? faults[Math.floor(random() * faults.length)] : ({ do: 'pass' } as const);
      rules.push({ op, action });
    }
  };
  pick('create', o.createOneIn, createFaults(o.lateMs));
  pick('last', o.readOneIn, READ_FAULTS);
  return rules;
}

/** The guarantees the run broke, one line each: none, or the soak fails. */
export function faultSoakProblems(r: FaultSoakReport): string[] {
  const problems = deliveryProblems(r.tallies, r.agent.unresolved, r.exitCode);
  if (r.unknownRequests === 0 || r.agent.reconciled === 0) problems.push('no outcome was unknown and reconciled: the run proved nothing');
  return problems;
}

/** One paragraph and a table: what the README's Guarantees section shows. */
export function faultSoakText(r: FaultSoakReport, table: (rows: readonly Tally[]) => string): string {
  const o = r.options;
  const kinds = Object.entries(r.faults).sort(([a], [b]) => a.localeCompare(b)).map(([name, n]) => `${name} ${n}`).join(', ');
  return [
    `Fault soak, seed ${o.seed}: ${COUNTERS.length} counters every ${EVERY_MS} ms for ${o.durationMs / 1000} s through the fault proxy, ` +
      `one outage of ${o.outageMs / 1000} s; a fault on one operation-4 request in ${o.createOneIn} and one read-back in ${o.readOneIn}; ` +
      `batches of ${UPLINK.batch}, a queue of ${UPLINK.queue}, timeout ${UPLINK.timeoutMs} ms, read-back after ${o.reconcileAfterMs} ms, ` +
      `late commits ${o.lateMs} ms after the agent gave up.`,
    '',
    table(r.tallies),
    '',
    `Operation-4 requests: ${r.creates}; ${r.unknownRequests} of them with an unknown outcome. Faults applied: ${kinds}.`,
    `The agent: ${r.agent.ambiguous} samples ambiguous, ${r.agent.reconciled} reconciled (read back and found stored), ` +
      `${r.agent.unresolved} unresolved (sent again undecided); ${r.agent.retries} retries, ${r.agent.requests} requests, ` +
      `${r.agent.droppedOverflow} dropped, ${r.agent.queued} still queued; exit code ${r.exitCode}.`,
  ].join('\n');
}
