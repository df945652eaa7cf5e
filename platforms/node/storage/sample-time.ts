// A sample's time across a restart. The core stamps each sample with the host's monotonic clock
// (performance.now(), which starts again at 0 in every process); the log keeps that time, `t` in whole ms,
// and in its checkpoints the wall clock's reading at that clock's zero, the anchor `w`. A later run turns
// `t` into its own clock through the wall clock both runs read: t + w - (its own anchor). docs/durable-queue.md
// says what a wall clock that was set meanwhile does to that.
import { performance } from 'node:perf_hooks';

/** The wall clock at this process's monotonic zero, as the wall clock reads now (ms). */
export function wallAnchor(): number {
  return Math.round(Date.now() - performance.now());
}

/**
 * A wall clock set by more than this since the anchor in force was written (an NTP step, a suspend): a
 * checkpoint with the new anchor goes before the next sample. Below it, the two clocks' drift.
 */
export const STEP_MS = 1000;

/**
 * How a sample's time is written: whole ms, never after `at`, so its age stays ≥ 0 (a time before this
 * run's zero is negative); NaN for none.
 */
export function storedTime(at: number): number {
  return Number.isFinite(at) ? Math.floor(at) : NaN;
}

/**
 * The time on this run's clock of a sample an earlier run wrote at `t` under `anchor`, read when this run's
 * anchor is `anchorNow` and its clock `now`: NaN when either is unknown, or when it would lie after `now`
 * (the wall clock was set back between the runs: its age would be negative).
 */
export function earlierRunTime(t: number, anchor: number, anchorNow: number, now: number): number {
  const at = t + anchor - anchorNow;
  return at <= now ? at : NaN;
}
