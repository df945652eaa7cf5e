// Retry delays after a transient failure: exponential backoff with full jitter (delay drawn uniformly
// from [0, min(cap, base·2^attempt))), so a fleet recovering from one outage does not retry in step.

/** Longest `Retry-After` the agent honours; a larger one is treated as this. */
export const MAX_RETRY_AFTER_MS = 3_600_000;

export function backoffDelay(attempt: number, baseMs: number, capMs: number, random: () => number): number {
  const ceiling = Math.min(capMs, baseMs * Math.pow(2, Math.min(attempt, 30)));
  return Math.floor(random() * ceiling);
}
