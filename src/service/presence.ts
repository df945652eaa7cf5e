// The presence rule (docs/interface.md, Presence): a resource is alive while its last presence update lies within
// `lifetime` minutes of now. Computed at read time from the stored update time, never stored itself.

const MINUTE_MS = 60_000;

/** `updatedAtMs` is when presence was last updated (null: never). */
export function isAlive(updatedAtMs: number | null, lifetimeMinutes: number, nowMs: number): boolean {
  return updatedAtMs !== null && nowMs - updatedAtMs <= lifetimeMinutes * MINUTE_MS;
}
