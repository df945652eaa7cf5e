// The backlog (docs/durable-queue.md): a Node agent with the durable queue and a queue of 256 samples in
// memory takes a million readings while the local service is unreachable, is killed with SIGKILL, is
// started again on the same directory with the service back (`feed-agent serve` in a child process), and
// delivers what waits at the default settings. The restart and the delivery are measured five times, on
// copies of the backlog, each against a service of its own, and each figure is the median: the machine is
// shared, and one delivery's rate varied by a factor of two from one minute to the next. Side by side, in the same run, today's design: the durable
// queue as a mirror of the queue in memory (no `read`), with the same 256 (what a full queue drops is
// lost) and, for the delivery, with a queue of a million in memory (the only way it holds them).
// Every agent runs in a process of its own (bench/backlog-agent.ts):
// - backlog.lost: readings accepted and never delivered (the most of any restart);
// - backlog.rssGrowthMb: RSS at most while the million are taken, less RSS after start;
// - backlog.restartMs: opening the durable queue and start() resolved, a million waiting;
// - backlog.restartRssGrowthMb: RSS after that start less RSS after the same start on an empty directory;
// - backlog.drainPerSecond: readings delivered a second from the first acknowledgement to the last;
// - backlog.diskBytesPerSample: the durable queue's bytes per reading waiting.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

import { closedPort } from '../test/node/support/listen';
import { ROOT } from '../test/support/build';
import { ARGS_ENV, playRole, ROLE_ENV } from './backlog-agent';
import type { AgentArgs, Design, Recorded, Restarted } from './backlog-agent';
import { format, median, round } from './measure';
import { SECTION_ENV } from './section';
import type { BenchSection } from './section';
import { serve } from './serve';

const SAMPLES = Number(process.env.FEED_AGENT_BENCH_BACKLOG_SAMPLES ?? 1_000_000);
const WINDOW = 256;
const DRAIN_LIMIT_MS = 600_000;

/** Restarts and deliveries of copies of one backlog: the machine is shared, so each figure is their median. */
const RESTARTS = 5;

interface Cycle {
  recorded: Recorded;
  restarted: Restarted[];
  empty: Restarted;
}

/** Runs this bench bundle again as `role`, and returns the JSON line it printed last. */
function inChild<T>(role: string, args: AgentArgs): T {
  const run = spawnSync(process.execPath, ['--expose-gc', process.argv[1]], {
    env: { ...process.env, [SECTION_ENV]: 'backlog', [ROLE_ENV]: role, [ARGS_ENV]: JSON.stringify(args) },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 1 << 20,
  });
  const line = run.stdout.trim().split('\n').pop();
  if (line === undefined || !line.startsWith('{')) throw new Error(`the backlog bench's ${role} process failed (${run.signal ?? run.status}): ${run.stdout}`);
  return JSON.parse(line) as T;
}

/** One design and queue size: its directory, and its agent's arguments for a directory and a service. */
interface Setup {
  dir: string;
  args: (dir: string, url: string) => AgentArgs;
}

function setup(work: string, name: string, kind: Design, queue: number): Setup {
  return { dir: join(work, name), args: (dir, url) => ({ dir, url, design: kind, queue, samples: SAMPLES, drainLimitMs: DRAIN_LIMIT_MS }) };
}

/**
 * For each design, a start on an empty directory and a million readings taken with the service away; then,
 * RESTARTS times and the designs in turn (so that a busier minute of the machine weighs on each alike), a
 * copy of what they left started again with the service back, each with a service of its own, so that each
 * delivery goes to an empty one.
 */
async function cycles(setups: Setup[], downUrl: string): Promise<Cycle[]> {
  const out: Cycle[] = setups.map((d) => ({
    empty: inChild<Restarted>('empty', d.args(d.dir + '-empty', downUrl)),
    recorded: inChild<Recorded>('record', d.args(d.dir, downUrl)),
    restarted: [],
  }));
  for (let k = 0; k < RESTARTS; k++) {
    // Each round begins with another design, so that none always follows the same one (its service's
    // exit, its copy's removal).
    for (let j = 0; j < setups.length; j++) {
      const i = (j + k) % setups.length;
      const d = setups[i];
      const copy = d.dir + '-' + k;
      cpSync(d.dir, copy, { recursive: true });
      const service = await serve();
      try {
        out[i].restarted.push(inChild<Restarted>('restart', d.args(copy, service.url)));
      } finally {
        await service.stop();
        rmSync(copy, { recursive: true, force: true });
      }
    }
  }
  return out;
}

const middle = (c: Cycle, of: (r: Restarted) => number) => median(c.restarted.map(of));
/** The most any restart did not deliver. */
const lost = (c: Cycle) => Math.max(...c.restarted.map((r) => c.recorded.accepted - r.sent - r.setAside));
const growth = (c: Cycle) => round(c.recorded.rssPeakMb - c.recorded.rssBeforeMb, 1);
const restartGrowth = (c: Cycle) => round(middle(c, (r) => r.rssMb) - c.empty.rssMb, 1);
const drainRate = (c: Cycle) => Math.round(middle(c, (r) => (r.drained / r.drainMs) * 1000));

export async function benchBacklog(): Promise<BenchSection> {
  const role = process.env[ROLE_ENV];
  if (role !== undefined) return playRole(role);
  const work = mkdtempSync(join(ROOT, 'tmp', 'bench-backlog-'));
  try {
    const down = 'http://' + (await closedPort(createServer()));
    const [backlog, today, inRam] = await cycles(
      [setup(work, 'backlog', 'backlog', WINDOW), setup(work, 'mirror', 'mirror', WINDOW), setup(work, 'ram', 'mirror', SAMPLES)],
      down,
    );
    const figures = {
      'backlog.lost': lost(backlog),
      'backlog.baselineLost': lost(today),
      'backlog.rssGrowthMb': growth(backlog),
      'backlog.baselineRssGrowthMb': growth(today),
      'backlog.restartMs': round(middle(backlog, (r) => r.startMs), 1),
      'backlog.baselineRestartMs': round(middle(today, (r) => r.startMs), 1),
      'backlog.restartRssGrowthMb': restartGrowth(backlog),
      'backlog.baselineRestartRssGrowthMb': restartGrowth(today),
      'backlog.drainPerSecond': drainRate(backlog),
      'backlog.baselineDrainPerSecond': drainRate(inRam),
      'backlog.diskBytesPerSample': round(backlog.recorded.diskBytes / backlog.recorded.backlog, 1),
    };
    const n = format(SAMPLES);
    return {
      title: `Backlog: ${n} readings taken with the service away, a kill -9, a restart with it back; the agent's default settings, queue ${WINDOW} in memory (baseline: today's design, the durable queue a mirror of that queue)`,
      rows: [
        { label: `readings lost of ${n} accepted`, value: figures['backlog.lost'], baseline: figures['backlog.baselineLost'], unit: 'readings' },
        { label: `RSS growth while taking ${n} (goal ≤ 40)`, value: figures['backlog.rssGrowthMb'], baseline: figures['backlog.baselineRssGrowthMb'], unit: 'MB' },
        { label: `restart: open and start with what waits (goal ≤ 2,000)`, value: figures['backlog.restartMs'], baseline: figures['backlog.baselineRestartMs'], unit: 'ms' },
        { label: `restart: RSS above a start with nothing waiting (goal ≤ 40)`, value: figures['backlog.restartRssGrowthMb'], baseline: figures['backlog.baselineRestartRssGrowthMb'], unit: 'MB' },
        { label: `delivery of what waits (goal ≥ 50,000; baseline: today's design holding the ${n} in a queue of ${n} in memory)`, value: figures['backlog.drainPerSecond'], baseline: figures['backlog.baselineDrainPerSecond'], unit: 'readings/s' },
        { label: 'disk bytes per reading waiting', value: figures['backlog.diskBytesPerSample'], unit: 'B' },
      ],
      table: [
        `  each restart: a copy of the same backlog, a service of its own; the figures above are the median of ${RESTARTS}`,
        '  design                    accepted   waiting at restart (in memory)   delivered   RSS after start, peak   restarts (ms)                   deliveries (readings/s)',
        ...[
          ['backlog, queue ' + WINDOW, backlog],
          ['today, queue ' + WINDOW, today],
          ['today, queue ' + n, inRam],
        ].map(([label, c]) => {
          const { recorded: r, restarted: s } = c as Cycle;
          const list = (of: (x: Restarted) => number) => s.map((x) => format(Math.round(of(x)))).join(', ');
          return (
            '  ' + (label as string).padEnd(24) + format(r.accepted).padStart(10) + (format(s[0].waiting) + ' (' + format(s[0].inMemory) + ')').padStart(33) +
            format(Math.min(...s.map((x) => x.sent))).padStart(12) + (format(round(r.rssBeforeMb, 1)) + ', ' + format(round(r.rssPeakMb, 1)) + ' MB').padStart(24) +
            '   ' + list((x) => x.startMs).padEnd(32) + list((x) => (x.drained / x.drainMs) * 1000)
          );
        }),
      ],
      figures,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
