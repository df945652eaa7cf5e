// How many samples a run counted unresolved (sent again without knowing whether the service stored
// them), read from its log lines: a killed process prints no summary, but each warning goes out as the
// count is made (uplink.ts), naming how many.
const UNRESOLVED = new RegExp(
  [
    'uplink: the (\\d+) samples whose outcome was unknown may or may not have been stored',
    'outcome unknown: (\\d+) samples may arrive twice',
    'uplink: reading back (\\d+) samples whose outcome was unknown failed, sending them again',
    'uplink: (\\d+) samples were out in a request when the last run ended and cannot be read back',
  ].join('|'),
);

/** The samples counted unresolved in `lines`. */
export function unresolvedIn(lines: readonly string[]): number {
  let n = 0;
  for (const line of lines) {
    const m = UNRESOLVED.exec(line);
    if (m !== null) n += Number(m.slice(1).find((x) => x !== undefined));
  }
  return n;
}
