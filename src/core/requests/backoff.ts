// The wait before a retry, for every retry ladder of the project (retry-ladder.ts holds one ladder's
// count): the uplink's (step.ts), the command poll, presence, the lookups, the gateway's MQTT reconnects
// and Modbus connects, the device's TLS connects. Exponential backoff with "equal jitter": the ceiling
// doubles with each try from `baseMs` up to `capMs`, and the wait is drawn from [ceiling/2, ceiling). The
// jitter spreads a fleet that recovers from one outage; the floor makes every failing cycle wait longer
// than the last, so a failing platform is never hammered, whatever fails (docs/architecture.md, "What
// counts as an attempt"). After an outage of N ms the next try comes within min(capMs, 2N + baseMs) of its
// end: the waits before the last one add up to at least half its ceiling.

/** Longest `Retry-After` the agent honours; a larger one is treated as this. */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/** A retry ladder's settings: the first ceiling and the largest. */
export interface Ladder {
  readonly baseMs: number;
  readonly capMs: number;
}

function ceiling(ladder: Ladder, attempt: number): number {
  return Math.min(ladder.capMs, ladder.baseMs * Math.pow(2, Math.min(attempt, 30)));
}

/** The wait before the next try, in ms: `attempt` waits were drawn since the last success, `draw` is a draw from [0, 1). */
export function backoffDelay(ladder: Ladder, attempt: number, draw: number): number {
  const c = ceiling(ladder, attempt);
  return Math.floor(c / 2 + (draw * c) / 2);
}

/** The most backoff waits that fit in `ms`, each at its floor: a failing cycle's budget of tries over `ms` is one more. */
export function waitsWithin(ladder: Ladder, ms: number): number {
  let waits = 0;
  for (let spent = ceiling(ladder, 0) / 2; spent <= ms; spent += ceiling(ladder, waits) / 2) waits++;
  return waits;
}

/** How soon after an outage of `outageMs` (requests failing at once) the next try comes, at the latest. */
export function resumeBound(ladder: Ladder, outageMs: number): number {
  return Math.min(ladder.capMs, 2 * outageMs + ladder.baseMs);
}
