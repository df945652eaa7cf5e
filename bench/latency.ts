// Latency: how old a sample is when the service stores it (when the service's 200 answer arrives), p50,
// p99 and max, for the demo device's five sensors at one reading a second each: through the agent at its
// default settings (a flush at least every 10 s, batches of 100), through the agent at its fastest
// settings (a flush as soon as a sample is queued), and, as the baseline, each reading sent with
// operation 3 as it is taken. The device time runs on a fast-forward clock (bench/device-run.ts): an
// hour of it at the defaults takes about a second.
import { agentRun, perSampleRun } from './device-run';
import type { DeviceRun } from './device-run';
import { median, percentile, round } from './measure';
import type { BenchRow, BenchSection } from './section';
import { serve } from './serve';

const RUNS = 3;
const DEFAULTS_MS = 3_600_000;
const FASTEST_MS = 300_000;
const FASTEST = { flushMs: 1, maxLatencyMs: 1, startJitterMs: 0 };

interface Ages {
  p50: number;
  p99: number;
  max: number;
}

/** p50, p99 and max of each of RUNS runs, each the median over the runs. */
async function ages(run: (seed: number) => Promise<Pick<DeviceRun, 'ages'>>): Promise<Ages> {
  const runs: Ages[] = [];
  for (let seed = 1; seed <= RUNS; seed++) {
    const { ages } = await run(seed);
    runs.push({ p50: percentile(ages, 50), p99: percentile(ages, 99), max: ages[ages.length - 1] });
  }
  const of = (key: keyof Ages) => round(median(runs.map((r) => r[key])), 1);
  return { p50: of('p50'), p99: of('p99'), max: of('max') };
}

export async function benchLatency(): Promise<BenchSection> {
  const service = await serve();
  let defaults: Ages, fastest: Ages, baseline: Ages;
  try {
    defaults = await ages((seed) => agentRun(service.url, {}, DEFAULTS_MS, seed));
    fastest = await ages((seed) => agentRun(service.url, FASTEST, FASTEST_MS, seed));
    baseline = await ages(() => perSampleRun(service.url, FASTEST_MS));
  } finally {
    await service.stop();
  }
  const rows = (name: string, a: Ages): BenchRow[] =>
    (['p50', 'p99', 'max'] as const).map((key) => ({ label: `${name}, ${key}`, value: a[key], baseline: baseline[key], unit: 'ms' }));
  return {
    title: 'Latency: age of a sample when the service stores it, demo device, 5 readings/s (baseline: operation 3 per reading as it is taken)',
    rows: [...rows('default settings (flush every 10 s, batches of 100)', defaults), ...rows('fastest settings (flushMs 1, maxLatencyMs 1)', fastest)],
    figures: {
      'latency.p50Ms': defaults.p50,
      'latency.p99Ms': defaults.p99,
      'latency.maxMs': defaults.max,
      'latency.fastestP50Ms': fastest.p50,
      'latency.fastestP99Ms': fastest.p99,
      'latency.fastestMaxMs': fastest.max,
      'latency.baselineP50Ms': baseline.p50,
      'latency.baselineP99Ms': baseline.p99,
      'latency.baselineMaxMs': baseline.max,
    },
  };
}
