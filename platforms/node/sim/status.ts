// What the simulator shows while it runs: on a terminal one status line rewritten in place, elsewhere a
// plain line every few seconds, with --json one JSON object per line. Events (start, commands, log lines,
// the summary) are printed between status updates in the same form. A fleet shows the sum of its
// devices' counts, and how many there are. Nothing here ever sees the token.
import type { AgentStats } from '../../../src/core/agent';

export type StatusMode = 'tty' | 'plain' | 'json';

/** How often `update` is called in each mode. */
export const STATUS_INTERVAL_MS: Record<StatusMode, number> = { tty: 250, plain: 5_000, json: 1_000 };

export interface Sink {
  write(text: string): unknown;
  /** Terminal width, when known: a status line longer than that would wrap and break the rewrite. */
  columns?: number;
}

/** The counts of one status update. */
export interface Status extends AgentStats {
  elapsedMs: number;
  samplesPerSecond: number;
  /** A fleet's size; absent for one device. */
  devices?: number;
}

// The rate is measured over about this long, so a 250 ms tick does not make it jump.
const RATE_WINDOW_MS = 5_000;

export class StatusView {
  private lineShown = false;
  private lastLine = '';
  private readonly history: { at: number; accepted: number }[] = [];

  /** `devices`: how many agents' counts each update sums (a fleet shows it). */
  constructor(
    readonly mode: StatusMode,
    private readonly sink: Sink,
    private readonly devices = 1,
  ) {}

  /** Shows the counts now (`now` and `startedAt` on the same monotonic clock). */
  update(stats: AgentStats, now: number, startedAt: number): Status {
    // The run began with nothing accepted: the first rate is measured from there.
    if (this.history.length === 0) this.history.push({ at: startedAt, accepted: 0 });
    const fleet = this.devices > 1 ? { devices: this.devices } : {};
    const status = { elapsedMs: Math.round(now - startedAt), samplesPerSecond: this.rate(stats.accepted, now), ...fleet, ...stats, oldestAgeMs: stats.oldestAgeMs === null ? null : Math.round(stats.oldestAgeMs) };
    if (this.mode === 'json') this.json({ type: 'status', ...status });
    else if (this.mode === 'plain') this.sink.write(statusLine(status) + '\n');
    else {
      this.lastLine = this.fit(statusLine(status));
      this.sink.write('\r' + this.lastLine + '\x1b[K');
      this.lineShown = true;
    }
    return status;
  }

  /** One event: `text` on a terminal or in plain mode, `data` (with its `type`) as JSON. */
  event(text: string, data: { type: string } & Record<string, unknown>): void {
    if (this.mode === 'json') {
      this.json(data);
      return;
    }
    // On a terminal the event goes above the status line, which is drawn again below it.
    if (this.lineShown) this.sink.write('\r\x1b[K');
    this.sink.write(text + '\n');
    if (this.lineShown) this.sink.write(this.lastLine);
  }

  /** Leaves the last status line in place and prints the summary below it. */
  finish(text: string, data: { type: string } & Record<string, unknown>): void {
    if (this.lineShown) this.sink.write('\n');
    this.lineShown = false;
    this.event(text, data);
  }

  private json(data: Record<string, unknown>): void {
    this.sink.write(JSON.stringify(data) + '\n');
  }

  private fit(line: string): string {
    const width = this.sink.columns;
    return width !== undefined && width > 1 && line.length >= width ? line.slice(0, width - 2) + '…' : line;
  }

  private rate(accepted: number, now: number): number {
    const h = this.history;
    h.push({ at: now, accepted });
    while (h.length > 2 && now - h[1].at >= RATE_WINDOW_MS) h.shift();
    const first = h[0];
    const seconds = (now - first.at) / 1000;
    return seconds > 0 ? Math.round(((accepted - first.accepted) / seconds) * 10) / 10 : 0;
  }
}

export function statusLine(s: Status): string {
  const parts = [
    ...(s.devices === undefined ? [] : [`devices ${s.devices}`]),
    // What waits on disk only, beyond the queue in memory, once there is some (--durable).
    `queued ${s.queued}` + (s.backlog > 0 ? ` (${s.backlog} on disk)` : ''),
    `sent ${s.sent}`,
    `${s.samplesPerSecond.toFixed(1)} samples/s`,
    // Only where report by exception is on: the samples it kept from the queue.
    ...(s.heldBack === 0 ? [] : [`held back ${s.heldBack}`]),
    `retries ${s.retries}`,
    `dropped ${s.droppedOverflow}`,
    `set aside ${s.setAside}`,
    // Samples an earlier run left without a time this run can give (docs/durable-queue.md), once there are some.
    ...(s.undated > 0 ? [`undated ${s.undated}`] : []),
  ];
  if (s.authPaused) parts.push('PAUSED: token refused');
  parts.push(`last error: ${s.lastError ?? 'none'}`);
  return parts.join('  ');
}

/**
 * A fleet's counts as one: every count and queue size added up, paused when any device is, the first
 * device's last error that there is, the oldest sample of any device and the smallest batch limit; the
 * set-asides per resource added up.
 */
export function sumStats(all: readonly AgentStats[]): AgentStats {
  const sum = { ...all[0], setAsideBy: { ...all[0].setAsideBy } };
  for (let i = 1; i < all.length; i++) {
    const s = all[i];
    for (const key of Object.keys(s) as (keyof AgentStats)[]) {
      const value = s[key];
      if (typeof value === 'number' && key !== 'oldestAgeMs' && key !== 'batchLimit') (sum[key] as number) += value;
    }
    sum.authPaused ||= s.authPaused;
    sum.lastError ??= s.lastError;
    // Not a spread over the fleet: a hundred thousand arguments can overflow the stack.
    if (s.oldestAgeMs !== null) sum.oldestAgeMs = Math.max(sum.oldestAgeMs ?? 0, s.oldestAgeMs);
    sum.batchLimit = Math.min(sum.batchLimit, s.batchLimit);
    for (const id in s.setAsideBy) sum.setAsideBy[id] = (sum.setAsideBy[id] ?? 0) + s.setAsideBy[id];
  }
  return sum;
}
