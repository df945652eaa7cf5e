// A restart while a batch is out: the agent is killed (its storage taken as it is, nothing stopped) with
// an operation-4 request in flight, and a new agent starts from that storage. Storage that keeps the
// batch (QueueStorage.sending) lets the new agent read it back first: stored, it leaves without a second
// copy, counted reconciled; not stored, it goes once. Storage that does not keep it gets the old
// behaviour: the batch goes again blind.
import { createAgent } from '../../src/core';
import type { InFlight, QueueStorage, SampleValue } from '../../src/core';
import { equal } from './assert';
import type { ScenarioContext } from './context';
import { agentConfig, drained, holdsInOrder, killable, recordRun, settle } from './helpers';
import type { FaultAction } from '../support/fault-proxy';
import type { Scenario } from './run';
import { R } from './seed';

/** Durable storage in memory: what a disk would hold after a kill, whole. */
function memoryStorage(keepsBatch: boolean): QueueStorage {
  const samples: { seq: number; resource: number; value: SampleValue; at: number }[] = [];
  let acked = 0;
  let next = 1;
  let out: InFlight | null = null;
  const storage: QueueStorage = {
    load(visit) {
      // The same clock goes on across the kill: every sample keeps its time.
      for (const s of samples) if (s.seq > acked) visit(s.seq, s.resource, s.value, s.at);
      return next;
    },
    append(seq, resource, value, at) {
      samples.push({ seq, resource, value, at });
      next = seq + 1;
    },
    ack(seq) {
      acked = Math.max(acked, seq);
      next = Math.max(next, seq + 1);
    },
  };
  if (!keepsBatch) return storage;
  storage.sending = (b) => {
    out = { firstSeq: b.firstSeq, lastSeq: b.lastSeq, count: b.count, size: b.size, resources: b.resources.slice(0, b.size), lastIds: b.lastIds.slice(0, b.size) };
  };
  storage.inFlight = () => out;
  return storage;
}

interface Fate {
  /** The killed agent's request reached the service. */
  stored: boolean;
  /** The storage keeps the batch that is out. */
  keepsBatch: boolean;
  /** Copies of the batch the service holds in the end, and the new agent's [reconciled, unresolved]. */
  copies: 1 | 2;
  counts: [reconciled: number, unresolved: number];
}

function restart(name: string, action: FaultAction, fate: Fate): Scenario {
  return {
    name,
    async run(ctx: ScenarioContext) {
      const storage = memoryStorage(fate.keepsBatch);
      const config = agentConfig(ctx, { uplink: { timeoutMs: 5_000 } });
      const first = killable(ctx.host);
      const killed = createAgent({ ...first.host, storage }, config);
      await settle(ctx, killed.start());
      await ctx.faults({ op: 'create', action });
      const values = recordRun(killed, R.counterA, 1, 5);
      void killed.flush();
      // The request is out (the proxy holds it); then the process dies.
      await ctx.clock.advance(0);
      equal((await ctx.service.values(R.counterA)).length, fate.stored ? 5 : 0, 'feeds stored when the agent was killed');
      first.kill();
      await ctx.clearFaults();
      // Restored samples are stamped with the restart: they go at the latest 10 s later.
      const agent = createAgent({ ...ctx.host, storage }, agentConfig(ctx, { uplink: { timeoutMs: 5_000, maxLatencyMs: 10_000 } }));
      await settle(ctx, agent.start());
      await drained(ctx, agent);
      await ctx.clock.advance(60_000);
      const stats = agent.stats();
      equal([stats.reconciled, stats.unresolved], fate.counts, '[reconciled, unresolved] after the restart');
      await holdsInOrder(ctx, R.counterA, values, 5 * (fate.copies - 1));
      equal((await ctx.service.values(R.counterA)).length, 5 * fate.copies, 'feeds stored');
      if (fate.keepsBatch) {
        // The new agent's first request about the batch is its read-back, at once (the killed agent's
        // request is the one that timed out at the proxy).
        const next = ctx.requests.find((r) => (r.op === 'create' || r.op === 'last') && r.outcome !== 'timeout')!;
        equal([next.op, next.t], ['last', 0], '[op, t] of the restarted agent\'s first request about the batch');
      }
      await settle(ctx, agent.stop());
    },
  };
}

export const restartScenarios: Scenario[] = [
  restart('restart: killed while the service stored the batch: read back after the restart, not sent again', { do: 'hold', after: true }, {
    stored: true, keepsBatch: true, copies: 1, counts: [5, 0],
  }),
  restart('restart: killed before the batch reached the service: read back after the restart, sent once', { do: 'hold', after: false }, {
    stored: false, keepsBatch: true, copies: 1, counts: [0, 0],
  }),
  restart('restart: storage that does not keep the batch out: it goes again blind (a duplicate, as before)', { do: 'hold', after: true }, {
    stored: true, keepsBatch: false, copies: 2, counts: [0, 0],
  }),
];
