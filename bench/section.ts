// What each benchmark module returns; bench/main.ts prints them side by side and merges `figures`
// into the one JSON object of `npm run bench -- --json` (keys such as `xs.agentSlots`, `service.feedsPerSecond`).
// And how a section runs in a process of its own: the bench bundle again, told the section to run.
import { spawnSync } from 'node:child_process';

export interface BenchRow {
  label: string;
  value: number;
  /** The same measure for the baseline, taken in the same run; omitted when a row has none. */
  baseline?: number;
  unit: string;
}

export interface BenchSection {
  title: string;
  rows: BenchRow[];
  /** Lines printed below the rows, for a section that is best read as a table of its own. */
  table?: string[];
  /** Flat, dotted keys, e.g. `{ 'service.feedsPerSecond': 61234 }`. */
  figures: Record<string, number>;
  /** A line under the title: why a section has no figures, for one. */
  note?: string;
}

/** Set in a section's own process: the section it runs, whose result it prints as one JSON line. */
export const SECTION_ENV = 'FEED_AGENT_BENCH_SECTION';

/** Runs section `name` in a process of its own, with `env` and --expose-gc (for measures read after a collection). */
export function runSection(name: string, env: Record<string, string> = {}): BenchSection {
  const run = spawnSync(process.execPath, ['--expose-gc', process.argv[1]], {
    env: { ...process.env, ...env, [SECTION_ENV]: name },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (run.status !== 0) throw new Error(`the ${name} section failed (exit ${run.status}): ${run.stdout}`);
  return JSON.parse(run.stdout.trim().split('\n').pop()!) as BenchSection;
}
