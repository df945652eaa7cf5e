// The agent processes of the backlog bench (bench/backlog.ts), each this bench bundle again told its role:
// - record: a Node agent on the durable queue in DIR, the service unreachable, takes SAMPLES readings as
//   fast as it can (a turn of the event loop every 10,000, so its timers run and its flushes fail as they
//   would), prints what it accepted and its RSS before and at most, and is killed with SIGKILL by itself;
// - restart: an agent started again on DIR with the service back prints how long opening and starting took
//   and its RSS then, delivers what waits, and prints how fast;
// - empty: the same start on an empty DIR, for the RSS of a start with nothing waiting.
// Every agent has the default settings but its queue in memory (QUEUE); the design `mirror` is today's:
// the durable queue without its backlog (no `read`), a mirror of the queue in memory.
import { writeSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setImmediate as turn } from 'node:timers/promises';

import { createAgent } from '../src/core/agent';
import type { Agent } from '../src/core/agent';
import type { QueueStorage } from '../src/core/host/host';
import { createNodeHost } from '../platforms/node/host/host';
import { openDurableQueue } from '../platforms/node/storage/durable-queue';
import type { DurableQueue } from '../platforms/node/storage/durable-queue';
import { demoDevice, NUMERIC, VALUES } from './demo';
import { sleep } from './measure';

export const ROLE_ENV = 'FEED_AGENT_BENCH_BACKLOG_ROLE';
export const ARGS_ENV = 'FEED_AGENT_BENCH_BACKLOG_ARGS';

export type Design = 'backlog' | 'mirror';

export interface AgentArgs {
  dir: string;
  url: string;
  design: Design;
  queue: number;
  samples: number;
  /** restart: how long the delivery may take before it is reported as it stands. */
  drainLimitMs: number;
}

export interface Recorded {
  accepted: number;
  notQueued: number;
  droppedOverflow: number;
  backlog: number;
  rssBeforeMb: number;
  rssPeakMb: number;
  diskBytes: number;
  recordMs: number;
}

export interface Restarted {
  /** From opening the durable queue to start() resolved. */
  startMs: number;
  rssMb: number;
  /** Samples waiting at start, and of them in memory. */
  waiting: number;
  inMemory: number;
  sent: number;
  setAside: number;
  /** Samples delivered from the first acknowledgement to the last, and over how long. */
  drained: number;
  drainMs: number;
  /** Whether anything was left queued at the limit. */
  left: number;
}

/** In a helper process: plays its role, prints its result as one JSON line, and never returns. */
export async function playRole(role: string): Promise<never> {
  const args = JSON.parse(process.env[ARGS_ENV]!) as AgentArgs;
  if (role === 'record') {
    print(await record(args));
    process.kill(process.pid, 'SIGKILL');
  }
  print(await restart(args, role === 'empty'));
  process.exit(0);
}

function print(result: Recorded | Restarted): void {
  writeSync(1, JSON.stringify(result) + '\n');
}

function open(args: AgentArgs): { agent: Agent; queue: DurableQueue } {
  const queue = openDurableQueue(args.dir);
  const storage: QueueStorage =
    args.design === 'backlog'
      ? queue
      : { load: queue.load.bind(queue), append: queue.append.bind(queue), ack: queue.ack.bind(queue), close: queue.close.bind(queue), sending: queue.sending.bind(queue), inFlight: queue.inFlight.bind(queue) };
  const agent = createAgent(createNodeHost({ storage, log: () => {} }), { ...demoDevice(args.url), resources: NUMERIC, uplink: { queue: args.queue } });
  return { agent, queue };
}

function rssMb(): number {
  return process.memoryUsage.rss() / (1024 * 1024);
}

function collected(): number {
  globalThis.gc?.();
  return rssMb();
}

async function record(args: AgentArgs): Promise<Recorded> {
  const { agent, queue } = open(args);
  await agent.start();
  const rssBeforeMb = collected();
  let rssPeakMb = rssBeforeMb;
  let notQueued = 0;
  const t0 = performance.now();
  for (let i = 0; i < args.samples; i++) {
    const resource = NUMERIC[i % NUMERIC.length];
    if (agent.record(resource, (VALUES[resource] as number) + (i % 10)) !== 'queued') notQueued++;
    if (i % 10_000 === 9_999) {
      rssPeakMb = Math.max(rssPeakMb, rssMb());
      await turn();
    }
  }
  const recordMs = performance.now() - t0;
  rssPeakMb = Math.max(rssPeakMb, rssMb());
  const s = agent.stats();
  return { accepted: s.accepted, notQueued, droppedOverflow: s.droppedOverflow, backlog: s.backlog, rssBeforeMb, rssPeakMb, diskBytes: queue.stats().bytes, recordMs };
}

async function restart(args: AgentArgs, empty: boolean): Promise<Restarted> {
  const t0 = performance.now();
  const { agent } = open(args);
  await agent.start();
  const startMs = performance.now() - t0;
  const rss = collected();
  const atStart = agent.stats();
  let first = NaN;
  let sentAtFirst = 0;
  const limit = performance.now() + args.drainLimitMs;
  while (!empty && agent.stats().queued > 0 && performance.now() < limit) {
    const sent = agent.stats().sent;
    if (sent > 0 && first !== first) {
      first = performance.now();
      sentAtFirst = sent;
    }
    await sleep(2);
  }
  const end = performance.now();
  const s = await agent.stop({ flush: false });
  return {
    startMs,
    rssMb: rss,
    waiting: atStart.queued,
    inMemory: atStart.queued - atStart.backlog,
    sent: s.sent,
    setAside: s.setAside,
    drained: s.sent - sentAtFirst,
    drainMs: end - first,
    left: s.queued,
  };
}
