// The property of delivery, over seeded random runs: random batches, samples and failures of every kind,
// then a stop. Nothing accepted is lost (each is stored, set aside because the service refused it, or
// dropped by a full queue, counted exactly), no valid reading is set aside, and only unresolved samples
// are stored twice. The rich runs add a small queue (overflow), refusals (isolation, beside overflow),
// a resource that vanishes, and command handlers that never settle. Plain ES2020 with no host global:
// test/core/property.test.ts runs it on Node, test/xs/core.xs.test.ts (probe `property`) on XS.
import { createAgent } from '../../src/core/agent';
import type { SetAside } from '../../src/core/config';
import { createRandom } from '../../src/core/host/random';
import { FakeService } from './fake-service';
import type { Fault } from './fake-service';
import { VirtualClock } from './virtual-clock';

// Each takes the random source and the number of elements in the request.
type Schedule = (r: () => number, n: number) => Fault | null;
// Answers, and failures whose outcome is known.
const KNOWN: Schedule[] = [
  () => null,
  () => null,
  () => null,
  () => ({ kind: 'network', maybeDelivered: false }),
  () => ({ kind: 'status', status: 503 }),
  () => ({ kind: 'status', status: 429, retryAfter: '3' }),
  // A real 413 blames the size of a batch; a single sample that is too large is set aside, not lost.
  (_r, n) => (n > 1 ? { kind: 'status', status: 413 } : null),
  () => ({ kind: 'status', status: 401 }),
];
/** Outcomes unknown to the agent, whether or not the service stored the batch first. */
const ANY: Schedule[] = [
  ...KNOWN,
  (r) => ({ kind: 'network', maybeDelivered: true, store: r() < 0.5 }),
  (r) => ({ kind: 'timeout', store: r() < 0.5 }),
  (r) => ({ kind: 'body', body: '{"success":true}', store: r() < 0.5 }),
];
/** Outcomes unknown only after the service stored the batch: a reset, a garbled answer, an answer too late. */
const AFTER_COMMIT: Schedule[] = [
  ...KNOWN,
  () => ({ kind: 'network', maybeDelivered: true, store: true }),
  () => ({ kind: 'body', body: '{"success":true}', store: true }),
  () => ({ kind: 'timeout', store: true }),
];
const READ_FAULTS: Fault[] = [
  { kind: 'status', status: 503 },
  { kind: 'network', maybeDelivered: true },
  { kind: 'timeout' },
  { kind: 'body', body: '{"success":' },
];

export interface PropertyOptions {
  /** Unknown outcomes after the service stored the batch only (no duplicate may result), or any. */
  afterCommitOnly: boolean;
  /** Read-backs fail too. */
  readFaults: boolean;
  /** A small queue, refusals, a vanishing resource, handlers that never settle. */
  rich: boolean;
}

export interface PropertyRun {
  seed: number;
  accepted: number;
  stored: number;
  duplicates: number;
  setAside: number;
  dropped: number;
  unresolved: number;
  reconciled: number;
  ambiguous: number;
  commands: number;
  /** The guarantees the run broke; none, or the property fails. */
  problems: string[];
}

/** Resources 1 and 2 are the agent's counters; 3 vanishes in the rich runs; 5 is an actuator. */
const RESOURCES = [
  { id: 1, begin: 0, end: 1_000_000 },
  { id: 2, begin: 0, end: 1_000_000 },
  { id: 3, begin: 0, end: 1_000_000 },
  { id: 5, begin: 0, end: 1 },
];

/** One seeded run. */
export async function runProperty(seed: number, o: PropertyOptions): Promise<PropertyRun> {
  const r = createRandom(seed);
  const clock = new VirtualClock();
  const service = new FakeService(clock, RESOURCES);
  const setAside: SetAside[] = [];
  const schedules = o.afterCommitOnly ? AFTER_COMMIT : ANY;
  const never = o.rich && r() < 0.5;
  const agent = createAgent(service.host(), {
    url: 'http://127.0.0.1:9',
    publicKey: 'KEY',
    token: service.token,
    seed,
    resources: [1, 2, 3],
    onSetAside: (item) => void setAside.push(item),
    actuators: o.rich ? [{ resource: 5, every: 300, timeoutMs: 1_000, handle: () => (never ? new Promise<void>(() => undefined) : undefined) }] : [],
    uplink: {
      batch: 1 + Math.floor(r() * 20), queue: o.rich ? 5 + Math.floor(r() * 40) : 200, timeoutMs: 1_000, flushMs: 500, maxLatencyMs: 800,
      backoffBaseMs: 100, backoffCapMs: 2_000, authRetryMs: 3_000, startJitterMs: 300, reconcileAfterMs: 2_000,
    },
  });
  service.faultFor = (n) => schedules[Math.floor(r() * schedules.length)](r, n);
  if (o.readFaults) service.readFaultFor = () => (r() < 0.3 ? READ_FAULTS[Math.floor(r() * READ_FAULTS.length)] : null);
  // The service refuses one value in 13 of the counters, naming its index or not.
  const refused = (v: unknown): boolean => o.rich && typeof v === 'number' && v % 13 === 5;
  if (o.rich) {
    service.refuse = (_resource, input) => refused(input);
    service.nameIndex = r() < 0.5;
  }
  await settle(clock, agent.start());
  const accepted: number[][] = [[], [], []];
  const total = 20 + Math.floor(r() * 80);
  const vanishAt = o.rich ? Math.floor(r() * total) : -1;
  for (let i = 0; i < total; i++) {
    if (i === vanishAt) service.resources.splice(2, 1);
    const resource = 1 + Math.floor(r() * (o.rich ? 3 : 2));
    if (agent.record(resource, i) === 'queued') accepted[resource - 1].push(i);
    if (o.rich && r() < 0.05) service.command(5, Math.floor(r() * 2));
    if (r() < 0.3) await clock.advance(Math.floor(r() * 400));
  }
  service.faultFor = null;
  service.readFaultFor = null;
  const stats = await settle(clock, agent.stop({ timeoutMs: 60_000 }), 60_000);
  const problems: string[] = [];
  let stored = 0;
  for (const resource of [1, 2, 3]) {
    const values = service.stored(resource) as number[];
    const firsts = values.filter((v, i) => values.indexOf(v) === i);
    stored += firsts.length;
    // What arrived came in the order it was accepted, and is what was accepted.
    const want = accepted[resource - 1];
    let k = 0;
    for (const v of firsts) {
      while (k < want.length && want[k] !== v) k++;
      if (k === want.length) problems.push('resource ' + resource + ': ' + v + ' stored out of order or never accepted');
    }
    if (!o.rich && JSON.stringify(firsts) !== JSON.stringify(want)) problems.push('resource ' + resource + ': stored ' + JSON.stringify(values) + ', accepted ' + JSON.stringify(want));
  }
  // No valid reading set aside: only a refused value, or a sample of the resource that vanished.
  for (const s of setAside) if (!refused(s.value) && s.resource !== 3) problems.push('a valid reading was set aside: ' + s.resource + '=' + String(s.value));
  const acceptedCount = accepted[0].length + accepted[1].length + accepted[2].length;
  const duplicates = service.feeds.filter((f) => f.resource <= 3).length - stored;
  if (stats.queued !== 0) problems.push(stats.queued + ' still queued after the drain');
  // Every reading is valid: record() accepted it, or refused it for a full queue (drop-oldest with all of
  // the queue held by the head) or for a vanished resource, each counted. Only an unresolved sample can be
  // counted twice: stored by a request whose outcome was unknown, then set aside when it went again.
  const counted = stored + stats.droppedOverflow + setAside.length;
  if (counted < total || counted - total > stats.unresolved) {
    problems.push(total + ' readings, but stored ' + stored + ' + dropped ' + stats.droppedOverflow + ' + set aside ' + setAside.length + ' (' + stats.unresolved + ' unresolved)');
  }
  if (duplicates > stats.unresolved) problems.push(duplicates + ' duplicates, more than the ' + stats.unresolved + ' unresolved');
  return {
    seed, accepted: acceptedCount, stored, duplicates, setAside: setAside.length, dropped: stats.droppedOverflow, unresolved: stats.unresolved,
    reconciled: stats.reconciled, ambiguous: stats.ambiguous, commands: stats.commands, problems,
  };
}

/** Advances virtual time until `work` settles (at most `limitMs` more). */
async function settle<T>(clock: VirtualClock, work: Promise<T>, limitMs = 10_000): Promise<T> {
  let done = false;
  let value: T | undefined;
  let error: unknown = null;
  work.then((v) => ((value = v), (done = true)), (e: unknown) => ((error = e), (done = true)));
  await clock.advance(0);
  await clock.advanceUntil(() => done, limitMs);
  if (!done) throw new Error('still pending after ' + limitMs + ' ms of virtual time');
  if (error !== null) throw error;
  return value as T;
}
