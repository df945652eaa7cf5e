// One retry ladder: the tries of one endpoint since its last success, and the wait before the next, drawn
// from the one backoff (backoff.ts). The command poll, presence, the lookups and the gateway's connections
// each keep one; the uplink's count lives in its delivery state (step.ts) and shares the report below.
import type { Log } from '../host/host';
import type { Ladder } from './backoff';
import { backoffDelay } from './backoff';

/** How often an endpoint that keeps failing is said to be failing still. */
export const STILL_FAILING_EVERY_MS = 300_000;

/**
 * Logs a failing endpoint when its state changes: its first failure, then every `STILL_FAILING_EVERY_MS`
 * with a count, and its recovery; never once per try, so an outage does not flood the log.
 */
export class FailureReport {
  /** Failed tries since the last success. */
  failures = 0;
  /** When the first of them came; -1 while the endpoint works. */
  since = -1;
  private saidAt = -1;

  constructor(
    private readonly name: string,
    private readonly log: Log,
  ) {}

  /** A failed try; true when it was said (the first, or the first after a while). */
  failed(now: number, why: string): boolean {
    this.failures++;
    if (this.since < 0) {
      this.since = now;
      this.saidAt = now;
      this.log('warn', this.name + ': failing: ' + why);
      return true;
    }
    if (now - this.saidAt < STILL_FAILING_EVERY_MS) return false;
    this.saidAt = now;
    this.log('warn', this.name + ': still failing, ' + this.failures + ' tries in ' + seconds(now - this.since) + ': ' + why);
    return true;
  }

  recovered(now: number): void {
    if (this.since >= 0) this.log('info', this.name + ': recovered after ' + this.failures + ' failed ' + (this.failures === 1 ? 'try' : 'tries') + ' in ' + seconds(now - this.since));
    this.failures = 0;
    this.since = -1;
  }
}

function seconds(ms: number): string {
  return Math.round(ms / 1000) + ' s';
}

export class RetryLadder {
  /** Waits drawn since the last success: the exponent of the next one. */
  attempt = 0;

  constructor(
    private readonly settings: Ladder,
    private readonly report: FailureReport | null,
    private readonly random: () => number,
  ) {}

  /** Failing since the last success. */
  get failing(): boolean {
    return this.attempt > 0;
  }

  /** A try failed at `now`, for `why`: the wait before the next one. */
  fail(now: number, why: string): number {
    this.report?.failed(now, why);
    return backoffDelay(this.settings, this.attempt++, this.random());
  }

  /** A try succeeded: the next failure starts the ladder again. */
  succeed(now: number): void {
    this.report?.recovered(now);
    this.attempt = 0;
  }
}
