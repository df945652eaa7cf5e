// Sends the queue through operation 4 and decides what happens after every answer. A batch leaves the
// queue only when the service acknowledged it (or when one bad element is isolated and set aside);
// everything else stays and is tried again. Delivery is at-least-once: only a request whose outcome
// is unknown (maybeDelivered) can lead to a duplicate, and those samples are counted as ambiguous.
import type { Host, SampleValue, TimerHandle } from './host';
import type { UplinkConfig } from './config';
import type { FeedClient } from './client';
import type { Counters } from './counters';
import type { Job } from './lane';
import type { SampleQueue } from './queue';
import { FeedError } from './errors';
import { retryDelay } from './backoff';

/** Statuses whose answer blames elements of the body rather than the request as a whole. */
function blamesElements(e: FeedError): boolean {
  return e.kind === 'http' && (e.status === 400 || e.status === 404 || e.status === 422);
}

export interface UplinkEvents {
  /** A sample left the queue without being stored: the service refused it. */
  setAside(resource: number, value: SampleValue, reason: string): void;
  /** Samples left the head of the queue: the durable log may be checkpointed. */
  departed(): void;
  /** A non-silent authenticated request reached the service. */
  presence(): void;
  report(level: 'warn' | 'error' | 'info', message: string): void;
}

export class Uplink implements Job {
  wanted = false;
  /** Current batch size: the configured one, halved by every 413. */
  batchLimit: number;
  /** Samples that left the queue by delivery, set-aside or eviction since start (for flush targets). */
  departedTotal = 0;
  /** True while the service refuses the token (401/403): nothing is sent until `authRetryMs` passes. */
  authPaused = false;
  draining = false;

  private inFlight = false;
  private attempt = 0;
  /** A transient failure left samples to retry: the next attempt is due when the backoff ends. */
  private retrying = false;
  /** No request before this time: backoff (which flush() may skip) or start jitter. */
  private backoffUntil = 0;
  /** No request before this time, whatever happens: Retry-After or the auth pause. */
  private holdUntil = 0;
  private lastSendAt: number;
  /** Isolation: the first `suspect` queued samples hold at least one the service refuses (bisection). */
  private suspect = 0;
  /** Isolation: the sample at this index is the one the service named (`element N:`); -1 when none. */
  private badIndex = -1;
  private rejectReason = '';
  private timer: TimerHandle | null = null;
  private wakeAt = Infinity;
  private waiters: { target: number; resolve: (done: boolean) => void }[] = [];
  private drained: (() => void) | null = null;
  private idled: (() => void) | null = null;
  private stopped = false;
  private readonly resourceAt = (i: number): number => this.queue.resourceAt(i);
  private readonly onTimer = (): void => {
    this.timer = null;
    this.wakeAt = Infinity;
    this.fire();
  };

  constructor(
    private readonly host: Host,
    private readonly client: FeedClient,
    private readonly queue: SampleQueue,
    private readonly settings: UplinkConfig,
    private readonly counters: Counters,
    private readonly random: () => number,
    private readonly events: UplinkEvents,
    private readonly want: () => void,
  ) {
    this.batchLimit = settings.batch;
    this.lastSendAt = host.now();
  }

  get busy(): boolean {
    return this.inFlight;
  }

  /** Spreads the first flush after start over `startJitterMs`. */
  begin(): void {
    const now = this.host.now();
    this.lastSendAt = now;
    this.backoffUntil = now + Math.floor(this.random() * this.settings.startJitterMs);
    this.schedule();
  }

  /** Stops scheduling; a request in flight still completes (see `whenIdle`). */
  end(): void {
    this.stopped = true;
    this.cancelTimer();
    this.watch();
    this.draining = false;
    this.settleWaiters(false);
    this.finishDrain();
  }

  /** Resolves when no request is in flight. */
  whenIdle(): Promise<void> {
    if (!this.inFlight) return Promise.resolve();
    return new Promise((resolve) => {
      this.idled = resolve;
    });
  }

  /** Called after a sample was queued, when `watch` asked for it. */
  queued(): void {
    if (!this.inFlight && (this.timer === null || this.queue.length >= this.batchLimit)) this.schedule();
  }

  /** Resolves true once everything queued now has left the queue; false at the first failure. */
  flush(): Promise<boolean> {
    if (this.queue.length === 0 && !this.inFlight) return Promise.resolve(true);
    if (this.host.now() < this.holdUntil) return Promise.resolve(false);
    return new Promise((resolve) => {
      this.waiters.push({ target: this.departedTotal + this.queue.length, resolve });
      this.backoffUntil = 0;
      if (!this.inFlight) this.fire();
    });
  }

  /** For stop(): resolves once the queue is empty, riding out transient failures with the usual backoff. */
  drain(): Promise<void> {
    this.draining = true;
    return new Promise((resolve) => {
      this.drained = resolve;
      if (!this.inFlight) this.schedule();
    });
  }

  private finishDrain(): void {
    const resolve = this.drained;
    this.drained = null;
    if (resolve !== null) resolve();
  }

  async run(): Promise<void> {
    this.setAsideIsolated();
    const n = this.nextCount();
    if (n === 0 || this.host.now() < this.holdUntil) {
      this.schedule();
      return;
    }
    this.inFlight = true;
    this.watch();
    this.queue.lock(n);
    const body = this.queue.encode(0, n);
    this.counters.requests++;
    let rejected: readonly { index: number; reason: string }[] | null = null;
    let error: unknown = null;
    try {
      rejected = (await this.client.createFeedsEncoded(body, n, this.resourceAt)).rejected;
    } catch (e) {
      error = e;
    }
    this.inFlight = false;
    this.lastSendAt = this.host.now();
    if (rejected !== null) this.delivered(n, rejected);
    else this.failed(n, error instanceof FeedError ? error : null, error);
    const idled = this.idled;
    this.idled = null;
    if (idled !== null) idled();
    this.schedule();
  }

  /** How many samples the next request carries (isolation sends the left half of the suspect range). */
  private nextCount(): number {
    if (this.badIndex > 0) return Math.min(this.badIndex, this.batchLimit);
    if (this.suspect > 1) return Math.min(Math.floor(this.suspect / 2), this.batchLimit);
    return Math.min(this.queue.length, this.batchLimit);
  }

  /** Sets aside the sample that isolation has pinned down, without sending it again. */
  private setAsideIsolated(): void {
    if (this.badIndex === 0 || this.suspect === 1) {
      this.badIndex = -1;
      this.suspect = 0;
      this.setAsideAt(0, this.rejectReason);
      this.queue.shift(1);
      this.left(1);
    }
  }

  private setAsideAt(i: number, reason: string): void {
    this.counters.setAside++;
    this.events.setAside(this.queue.resourceAt(i), this.queue.valueAt(i), reason);
  }

  private delivered(n: number, rejected: readonly { index: number; reason: string }[]): void {
    // The {success, failed} form: the service stored the rest; the failed ones are set aside.
    for (const r of rejected) this.setAsideAt(r.index, r.reason);
    this.counters.sent += n - rejected.length;
    this.counters.batches++;
    this.queue.shift(n);
    if (this.badIndex > 0) this.badIndex -= n;
    // A prefix of the suspect range went through, so the refused sample is in the rest.
    if (this.suspect > 0) this.suspect -= n;
    this.attempt = 0;
    this.retrying = false;
    this.backoffUntil = 0;
    this.authPaused = false;
    this.events.presence();
    this.left(n);
  }

  private failed(n: number, e: FeedError | null, raw: unknown): void {
    this.queue.unlock();
    const now = this.host.now();
    if (e === null) {
      // Not the client's typed error: a fault of the host adapter. Treat it as transient.
      this.events.report('error', 'uplink: ' + describeFault(raw));
      this.backoff(now, -1);
      return;
    }
    this.counters.lastError = e.message;
    if (e.kind === 'http' && e.status === 413) {
      if (n > 1) {
        this.batchLimit = Math.max(1, Math.floor(n / 2));
        this.events.report('warn', 'the service found ' + n + ' samples too large; batches now hold at most ' + this.batchLimit);
      } else {
        this.badIndex = 0;
        this.rejectReason = e.message;
      }
      return;
    }
    if (blamesElements(e)) {
      const named = e.elementIndex;
      if (named >= 0 && named < n) {
        this.badIndex = named;
        this.suspect = 0;
      } else {
        this.badIndex = -1;
        this.suspect = n;
      }
      this.rejectReason = e.message;
      return;
    }
    if (e.retryable) {
      this.counters.retries++;
      if (e.maybeDelivered) this.counters.ambiguous += n;
      this.events.report('warn', 'uplink: ' + e.message + (e.maybeDelivered ? ' (outcome unknown: ' + n + ' samples may arrive twice)' : ''));
      this.backoff(now, e.retryAfterMs);
      return;
    }
    // 401/403, or an answer that blames the request as a whole: keep every sample, try again rarely.
    this.authPaused = e.status === 401 || e.status === 403;
    this.holdUntil = now + this.settings.authRetryMs;
    this.retrying = true;
    this.events.report('error', 'uplink paused: ' + e.message);
    this.settleWaiters(false);
  }

  private backoff(now: number, retryAfterMs: number): void {
    const s = this.settings;
    const delay = retryDelay(this.attempt++, retryAfterMs, s.backoffBaseMs, s.backoffCapMs, this.random);
    this.retrying = true;
    if (retryAfterMs >= 0) this.holdUntil = now + delay;
    else this.backoffUntil = now + delay;
    if (!this.draining) this.settleWaiters(false);
  }

  private left(n: number): void {
    this.departedTotal += n;
    this.events.departed();
    this.settleWaiters(true);
  }

  /** Samples evicted by overflow also count as gone for flush targets. */
  evicted(): void {
    this.departedTotal++;
  }

  private settleWaiters(ok: boolean): void {
    if (this.waiters.length === 0) return;
    const keep: typeof this.waiters = [];
    for (const w of this.waiters) {
      if (!ok) w.resolve(false);
      else if (this.departedTotal >= w.target && !this.inFlight) w.resolve(true);
      else keep.push(w);
    }
    this.waiters = keep;
  }

  /** Arms the one timer for the next attempt, or asks the lane now. */
  private schedule(): void {
    this.plan();
    this.watch();
  }

  private plan(): void {
    if (this.inFlight || this.stopped) return;
    if (this.queue.length === 0) {
      this.cancelTimer();
      this.settleWaiters(true);
      this.finishDrain();
      return;
    }
    const now = this.host.now();
    const s = this.settings;
    const isolating = this.suspect > 0 || this.badIndex >= 0;
    const urgent = isolating || this.retrying || this.queue.length >= this.batchLimit || this.waiters.length > 0 || this.draining;
    let at = urgent ? now : Math.min(this.lastSendAt + s.flushMs, this.queue.oldestAt() + s.maxLatencyMs);
    at = Math.max(at, this.backoffUntil, this.holdUntil);
    if (at <= now) {
      this.fire();
      return;
    }
    if (this.timer !== null && this.wakeAt <= at) return;
    this.cancelTimer();
    this.wakeAt = at;
    this.timer = this.host.setTimer(at - now, this.onTimer);
  }

  private fire(): void {
    this.cancelTimer();
    this.want();
    this.watch();
  }

  /**
   * Tells the queue which sample needs `queued()`, after every change of the state that decides it: every
   * one while no flush is pending (the first arms the timer), the one that fills a batch while the timer
   * runs, none while a request is out (its answer reschedules).
   */
  private watch(): void {
    this.queue.wake(this.inFlight || this.stopped ? Infinity : this.timer === null ? 1 : this.batchLimit);
  }

  private cancelTimer(): void {
    if (this.timer !== null) this.host.clearTimer(this.timer);
    this.timer = null;
    this.wakeAt = Infinity;
  }
}

function describeFault(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
