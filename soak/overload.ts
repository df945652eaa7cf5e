// Overload: far more samples than a slow service can take, into a queue of 1,024 that drops the oldest.
// On Node, the agent (Node host, real HTTP) records as fast as it can through a proxy that holds each
// answer back, while its process's RSS is read at intervals; afterwards the service's file is compared with
// what was recorded: what it lacks must be exactly the drop counter, and the newest samples must be there.
// The same on XS is overload-xs.ts, imported only where it runs: the XS harness locks its process down
// (SES, @endo/init), which would slow this run and change the memory it measures.
import { join } from 'node:path';
import { setImmediate as yieldToIo } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createAgent } from '../src/core';
import type { AgentStats } from '../src/core';
import { startService } from '../src/service';
import { createNodeHost } from '../platforms/node';
import { format } from '../bench/measure';
import { COUNTERS, DEVICE, SEED, storedFeeds } from '../test/e2e/support';
import { FaultProxy } from '../test/support/fault-proxy';
import type { XsOverloadReport } from './overload-xs';

const QUEUE = 1024;
const BATCH = 100;
const RESOURCE = COUNTERS[0];

export interface NodeOverloadReport {
  samples: number;
  /** The agent's counts after stop(). */
  stats: AgentStats;
  /** RSS in bytes, and the heap in use after a full collection, read after each twentieth of the samples. */
  rss: number[];
  heap: number[];
  /** Distinct values the service holds, feeds that repeat one, and the newest value it lacks (-1: none of the last QUEUE - BATCH). */
  stored: number;
  duplicated: number;
  newestMissing: number;
  /** Whether the process ran locked down (SES froze its built-ins): its speed and memory would not be Node's own. */
  lockedDown: boolean;
}

/** `samples` readings into the agent against a service whose every batch answer is `slowMs` late. */
export async function nodeOverload(samples: number, slowMs: number, dir: string): Promise<NodeOverloadReport> {
  const dbFile = join(dir, 'overload.db');
  const service = await startService({ seed: SEED, dbFile });
  const rss: number[] = [];
  const heap: number[] = [];
  const gc = collector();
  let proxy: FaultProxy | null = null;
  let stats: AgentStats;
  try {
    proxy = await FaultProxy.start(service.url);
    proxy.faults([{ op: 'create', always: true, action: { do: 'slow', ms: slowMs } }]);
    const agent = createAgent(createNodeHost(), {
      url: proxy.url,
      publicKey: DEVICE.key,
      token: DEVICE.token,
      resources: [RESOURCE],
      uplink: { queue: QUEUE, batch: BATCH, startJitterMs: 0 },
    });
    await agent.start();
    for (let i = 0; i < samples; i++) {
      agent.record(RESOURCE, i);
      // Answers come in between, as they would between a device's readings.
      if ((i + 1) % 1000 === 0) await yieldToIo();
      if ((i + 1) % (samples / 20) === 0) {
        rss.push(process.memoryUsage().rss);
        // The proxy's list of what the service stored is the harness's memory, not the agent's.
        proxy.stored.splice(0);
        gc();
        heap.push(process.memoryUsage().heapUsed);
      }
    }
    stats = await agent.stop({ flush: true, timeoutMs: 60_000 });
  } finally {
    await proxy?.close();
    await service.close();
  }
  const values = storedFeeds(dbFile).map((f) => Number(f.value));
  const distinct = new Set(values);
  let newestMissing = -1;
  for (let v = samples - (QUEUE - BATCH); v < samples; v++) if (!distinct.has(v)) newestMissing = v;
  const lockedDown = Object.isFrozen(Array.prototype);
  return { samples, stats, rss, heap, stored: distinct.size, duplicated: values.length - distinct.size, newestMissing, lockedDown };
}

/** V8's full collection, which Node exposes only behind a flag: set it, then fetch `gc` from a fresh context. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** The guarantees the runs broke, one line each: none, or the soak fails. */
export function overloadProblems(node: NodeOverloadReport | null, xs: XsOverloadReport | null): string[] {
  const problems: string[] = [];
  if (node !== null) {
    const s = node.stats;
    if (s.accepted !== node.samples || s.queued !== 0 || s.ambiguous !== 0) problems.push('Node: the agent ended with ' + JSON.stringify(s));
    if (node.stored + s.droppedOverflow !== node.samples) problems.push(`Node: stored ${node.stored} + dropped ${s.droppedOverflow} is not ${node.samples}`);
    if (s.droppedOverflow < node.samples / 2) problems.push('Node: only ' + s.droppedOverflow + ' dropped: the service was not slow enough to overload the agent');
    if (node.duplicated > 0 || node.newestMissing >= 0) problems.push(`Node: ${node.duplicated} duplicated, newest missing ${node.newestMissing}`);
    if (node.lockedDown) problems.push('Node: the process was locked down (SES), so its figures are not Node\'s own: was the XS harness imported before the run?');
    // Bounded whatever the number of samples: after the first twentieth, RSS moves by less than 64 MB, and
    // the heap after a full collection by less than 4 MB (warming up takes about 1 MB; a leak of 40 bytes
    // a sample would pass 4 MB within 100,000 samples).
    const spread = (xs: number[]) => Math.max(...xs.slice(1)) - Math.min(...xs.slice(1));
    if (spread(node.rss) >= 64 * 1048576) problems.push('Node: RSS moved by 64 MB or more: ' + node.rss.join(' '));
    if (spread(node.heap) >= 4 * 1048576) problems.push('Node: the heap moved by 4 MB or more: ' + node.heap.join(' '));
  }
  if (xs !== null) {
    if (xs.added.slice(1).some((n) => n !== 0)) problems.push('XS: live slots added by each step: ' + xs.added.join(' '));
    const c = xs.counts;
    if (c.accepted !== xs.samples || c.queued !== QUEUE || c.droppedOverflow !== xs.samples - QUEUE) problems.push('XS: the agent counted ' + JSON.stringify(c));
  }
  return problems;
}

/** Both runs in a few lines (README, Guarantees). */
export function overloadText(node: NodeOverloadReport, xs: XsOverloadReport): string {
  const mb = (bytes: number) => (bytes / 1048576).toFixed(1);
  const s = node.stats;
  return [
    `Overload on Node: ${format(node.samples)} samples into a queue of ${format(QUEUE)} (drop-oldest) against a service answering each ` +
      `batch late: the service holds ${format(node.stored)}, the agent dropped ${format(s.droppedOverflow)} ` +
      `(together ${format(node.stored + s.droppedOverflow)}), ${node.duplicated} duplicated, the newest ${QUEUE - BATCH} all stored: ` +
      `${node.newestMissing < 0 ? 'yes' : 'no, ' + node.newestMissing + ' missing'}. By twentieths, RSS (MB): ${node.rss.map(mb).join(' ')}; ` +
      `heap in use after a full collection (MB): ${node.heap.map(mb).join(' ')}.`,
    `Overload on XS: ${format(xs.samples)} samples into a queue of ${format(QUEUE)} whose batch is never answered: live slots added by each ` +
      `step of ${format(xs.samples / xs.added.length)}: ${xs.added.join(' ')}; accepted ${format(xs.counts.accepted)}, queued ${xs.counts.queued}, ` +
      `dropped ${format(xs.counts.droppedOverflow)}; ${format(xs.computePerSample)} XS compute per sample once full.`,
  ].join('\n');
}
