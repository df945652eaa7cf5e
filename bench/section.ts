// What each benchmark module returns; bench/main.ts prints them side by side and merges `figures`
// into the one JSON object of `npm run bench -- --json` (keys such as `xs.agentSlots`, `service.feedsPerSecond`).
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
  /** Flat, dotted keys, e.g. `{ 'service.feedsPerSecond': 61234 }`. */
  figures: Record<string, number>;
  /** A line under the title: why a section has no figures, for one. */
  note?: string;
}
