// What a run of the agent said of its deliveries, read from its log lines: a killed process prints no
// summary, but each line goes out as the count is made (uplink.ts, stored-queue.ts).
const UNRESOLVED = new RegExp(
  [
    'uplink: the (\\d+) samples whose outcome was unknown may or may not have been stored',
    'outcome unknown: (\\d+) samples may arrive twice',
    'uplink: reading back (\\d+) samples whose outcome was unknown failed, sending them again',
    'uplink: (\\d+) samples were out in a request when the last run ended and cannot be read back',
  ].join('|'),
);

/** The samples counted unresolved (sent again without knowing whether the service stored them) in `lines`. */
export function unresolvedIn(lines: readonly string[]): number {
  let n = 0;
  for (const line of lines) {
    const m = UNRESOLVED.exec(line);
    if (m !== null) n += Number(m.slice(1).find((x) => x !== undefined));
  }
  return n;
}

/** Batches out in a request at a kill that the next run read back, and the samples it found stored. */
export function readBacksIn(lines: readonly string[]): { batches: number; stored: number } {
  let batches = 0;
  let stored = 0;
  for (const line of lines) {
    if (/a batch of \d+ samples was out in a request when the last run ended/.test(line)) batches++;
    stored += Number(/uplink: the (\d+) samples whose outcome was unknown were stored/.exec(line)?.[1] ?? 0);
  }
  return { batches, stored };
}
