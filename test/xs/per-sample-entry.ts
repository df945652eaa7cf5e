// Bundled into the XS worker for the per-sample allocation tests (per-sample.xs.test.ts): an agent with a
// window of 256 samples, optionally on a storage that holds a backlog in typed arrays allocated once (so
// that the storage itself allocates nothing) and with report-by-exception rules; first with the service
// refusing every batch (samples spill to the backlog), then delivering (the backlog is read back into the
// window as batches leave). Each step is one evaluation.
import { createAgent } from '../../src/core';
import type { Agent, HttpRequest, HttpResult, QueueStorage, ReportConfig, StoredVisit } from '../../src/core';
import { VirtualClock } from '../support/virtual-clock';
import { settled, xsLink } from './host';

const clock = new VirtualClock();
let agent: Agent | null = null;
let refusing = true;

/** A backlog of numbers in typed arrays: a ring of `capacity` samples, never at its bound in this run. */
function ringBacklog(capacity: number): QueueStorage {
  const seqs = new Float64Array(capacity), resources = new Uint32Array(capacity), values = new Float64Array(capacity), ats = new Float64Array(capacity);
  let first = 1; // the oldest unacknowledged sequence number
  let next = 1;
  const visitFrom = (from: number, max: number, visit: StoredVisit): number => {
    let seq = Math.max(from, first);
    for (let n = 0; seq < next && n < max; seq++, n++) {
      const j = seq % capacity;
      if (visit(seqs[j], resources[j], values[j], ats[j]) === false) return seq;
    }
    return seq;
  };
  return {
    maxBytes: capacity * 28,
    usedBytes: () => (next - first) * 28,
    load: (visit, max) => (visitFrom(first, max ?? capacity, visit), next),
    append(seq, resource, value, at) {
      const j = seq % capacity;
      seqs[j] = seq;
      resources[j] = resource;
      values[j] = value as number;
      ats[j] = at;
      next = seq + 1;
      return true;
    },
    ack(seq) {
      first = Math.max(first, seq + 1);
    },
    read: visitFrom,
    discard: () => 0,
  };
}

/** Reads reach the real service; a batch is refused (nothing sent) while `refusing`, else it reaches the service too. */
function request(req: HttpRequest): Promise<HttpResult> {
  if (req.method === 'POST' && refusing) return Promise.resolve({ kind: 'network', message: 'connection refused', maybeDelivered: false });
  return xsLink({ cmd: 'http', t: clock.now(), req }).then((outcome) => {
    if (outcome.kind === 'pending') throw new Error('the request was held');
    return outcome;
  });
}

const perSample = {
  start(device: { url: string; publicKey: string; token: string; resource: number }, options: { backlog: boolean; reporting: ReportConfig[] }) {
    const host = { request, now: clock.now, setTimer: clock.setTimer, clearTimer: clock.clearTimer, storage: options.backlog ? ringBacklog(65536) : undefined };
    const uplink = { queue: 256, batch: 100, startJitterMs: 0 };
    const { url, publicKey, token, resource } = device;
    agent = createAgent(host, { url, publicKey, token, resources: [resource], reporting: options.reporting, seed: 1, uplink });
    return settled(agent.start());
  },

  /** `count` readings `from`, `from + 1`, …, then a second of virtual time; the service refuses every batch. */
  record(resource: number, from: number, count: number) {
    const a = agent as Agent;
    for (let i = 0; i < count; i++) a.record(resource, from + i);
    return settled(clock.advance(1_000).then(() => perSample.counts()));
  },

  /** The service takes batches from now on: virtual time moves `ms` on, and the backlog drains. */
  deliver(ms: number) {
    refusing = false;
    return settled(clock.advance(ms).then(() => perSample.counts()));
  },

  counts() {
    const s = (agent as Agent).stats();
    return { accepted: s.accepted, queued: s.queued, backlog: s.backlog, sent: s.sent, droppedOverflow: s.droppedOverflow, heldBack: s.heldBack };
  },
};

(globalThis as { perSample?: unknown }).perSample = perSample;
