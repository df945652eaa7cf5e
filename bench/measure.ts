// Small helpers every benchmark shares: several runs reduced to their median, percentiles of a sample
// set, rounding for the JSON figures and numbers for the tables.

/** The median of `runs` results of `run()`, taken one after the other. */
export async function medianOf(runs: number, run: () => Promise<number>): Promise<number> {
  const results: number[] = [];
  for (let i = 0; i < runs; i++) results.push(await run());
  return median(results);
}

export function median(values: readonly number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}

/** The `p`-th percentile (nearest rank) of values sorted ascending. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new RangeError('no values');
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export function round(n: number, digits = 3): number {
  const unit = 10 ** digits;
  return Math.round(n * unit) / unit;
}

/** Thousands grouped by hand: the XS harness's lockdown (SES) turns toLocaleString into toString. */
export function format(n: number): string {
  const [whole, fraction] = String(round(n)).split('.');
  return whole.replace(/\B(?=(\d{3})+$)/g, ',') + (fraction === undefined ? '' : '.' + fraction);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
