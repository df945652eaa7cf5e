// The wait before a retry, for every retry ladder of the project: the uplink's (head.ts), the lookups
// of a resource the service says is gone (vanished.ts), the gateway's MQTT reconnects and Modbus
// connects and reads. Exponential backoff with full jitter: the wait is drawn uniformly from
// [0, ceiling), so a fleet recovering from one outage does not retry in step; the ceiling doubles with
// each try from `baseMs` up to `capMs`, and never passes how long the failing has lasted (nor drops
// below `baseMs` for that): after an outage of N ms the next try comes within max(base, min(cap, N)) of
// its end, however many tries the outage cost (docs/architecture.md, "What counts as an attempt").

/** Longest `Retry-After` the agent honours; a larger one is treated as this. */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/** A retry ladder's settings: the first ceiling and the largest. */
export interface Ladder {
  readonly baseMs: number;
  readonly capMs: number;
}

/**
 * The wait before the next try, in ms: `attempt` waits were drawn since the last success, the failing
 * has lasted `failingMs`, and `draw` is a draw from [0, 1).
 */
export function backoffDelay(ladder: Ladder, attempt: number, failingMs: number, draw: number): number {
  const ceiling = Math.min(ladder.capMs, ladder.baseMs * Math.pow(2, Math.min(attempt, 30)), Math.max(ladder.baseMs, failingMs));
  return Math.floor(draw * ceiling);
}
