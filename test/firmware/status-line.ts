// The firmware's status line (platforms/moddable/firmware/status.ts) read back, as the tests of a real
// build follow a run by it: one reader, checked against the formatter (status-line.test.ts), so that a
// change of the line fails there rather than as a wait that never ends.

export interface Status {
  queued: number;
  accepted: number;
  sent: number;
  /** Failed tries of the uplink. */
  retries: number;
  dropped: number;
  setAside: number;
  /** Samples sent again without knowing whether they were stored: the most that may be stored twice. */
  unresolved: number;
  /** HTTP requests made, of every kind. */
  requests: number;
}

const STATUS = /^feed-agent: queued (\d+)\/\d+, accepted (\d+), sent (\d+) in \d+ batches, retries (\d+), dropped (\d+), rejected \d+, set aside (\d+), unresolved (\d+), requests (\d+)/;

/** The counts of a status line, or null for another line. */
export function readStatus(line: string): Status | null {
  const m = STATUS.exec(line);
  if (m === null) return null;
  const [queued, accepted, sent, retries, dropped, setAside, unresolved, requests] = m.slice(1).map(Number);
  return { queued, accepted, sent, retries, dropped, setAside, unresolved, requests };
}

/** The newest status line of `lines` from index `from` on, read; or null. */
export function lastStatus(lines: readonly string[], from = 0): Status | null {
  for (let i = lines.length - 1; i >= from; i--) {
    const status = readStatus(lines[i]);
    if (status !== null) return status;
  }
  return null;
}
