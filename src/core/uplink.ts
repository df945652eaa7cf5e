// Sends the queue through operation 4 and decides what happens after every answer. A batch leaves the
// queue only when the service acknowledged it, when a read-back showed it stored, or when one bad element
// is isolated and set aside; everything else stays and is tried again. Delivery is at-least-once: only a
// request whose outcome is unknown (maybeDelivered) can lead to a duplicate; such a batch is read back
// before it is sent again (reconcile.ts), and what that cannot decide is counted as unresolved.
//
// Its phases, and the fields that make each one:
//
//   waiting      nothing in flight; `timer_` armed for the next flush (flushMs, maxLatencyMs, a full batch)
//   in flight    `inFlight_`: the lane started a run, which resumes on a fresh stack and then has one
//                request out (a batch, or a read-back); the head samples are locked while it is
//   retrying     `retrying_`: a failure left samples; no attempt before `backoffUntil_` / `holdUntil_`
//   reconciling  `reconciler_.pending_`: the head batch's outcome is unknown; the next attempt reads it back
//   isolating    `suspect_` / `badIndex_`: the service refused an element; prefixes go until it is found
//   paused       `authPaused_`: the token was refused; `holdUntil_` is the next try
//   draining     `draining_`: stop() rides out failures until the queue is empty
//   stopped      `stopped_`: no scheduling; a request in flight still completes
import type { Host, SampleValue, TimerHandle } from './host';
import type { UplinkConfig } from './config';
import type { BatchOutcome, FeedClient } from './client';
import type { Counters } from './counters';
import type { Job } from './lane';
import type { SampleQueue } from './queue';
import { FeedError, errorText, isAuthError } from './errors';
import { retryDelay } from './backoff';
import type { Reconciler } from './reconcile';
import { STORED, UNDECIDED } from './reconcile';

/** Statuses whose answer blames elements of the body rather than the request as a whole. */
function blamesElements(e: FeedError): boolean {
  return e.kind === 'http' && (e.status === 400 || e.status === 404 || e.status === 422);
}

export interface UplinkEvents {
  /** A sample left the queue without being stored: the service refused it. */
  setAside_(resource: number, value: SampleValue, reason: string): void;
  /** Samples left the head of the queue: the durable log may be checkpointed. */
  departed_(): void;
  /** A non-silent authenticated request reached the service. */
  presence_(): void;
  report_(level: 'warn' | 'error' | 'info', message: string): void;
}

export class Uplink implements Job {
  wanted_ = false;
  /** Current batch size: the configured one, halved by every 413. */
  batchLimit_: number;
  /** Samples that left the queue by delivery, set-aside or eviction since start (for flush targets). */
  departedTotal_ = 0;
  /** True while the service refuses the token (401/403): nothing is sent until `authRetryMs` passes. */
  authPaused_ = false;
  draining_ = false;

  private inFlight_ = false;
  private attempt_ = 0;
  /**
   * A failure left samples to retry (backoff, Retry-After or the auth pause); read by the agent, whose
   * storage writes when needed only while this holds.
   */
  retrying_ = false;
  /** No request before this time: backoff (which flush() may skip) or start jitter. */
  private backoffUntil_ = 0;
  /** No request before this time, whatever happens: Retry-After or the auth pause. */
  private holdUntil_ = 0;
  private lastSendAt_: number;
  /** Isolation: the first `suspect_` queued samples hold at least one the service refuses (bisection). */
  private suspect_ = 0;
  /** Isolation: the sample at this index is the one the service named (`element N:`); -1 when none. */
  private badIndex_ = -1;
  private rejectReason_ = '';
  private timer_: TimerHandle | null = null;
  private wakeAt_ = Infinity;
  private waiters_: { target: number; resolve: (done: boolean) => void }[] = [];
  private drained_: (() => void) | null = null;
  private idled_: (() => void) | null = null;
  private stopped_ = false;
  private readonly freshStack_ = Promise.resolve();
  private readonly resourceAt_ = (i: number): number => this.queue_.resourceAt(i);
  // The timer only wakes the uplink; what is due is decided again. A host's timer may fire a little early
  // by its clock (Node's count whole milliseconds of the event loop's time, `now()` does not), and a
  // read-back made before `reconcileAfterMs` is over cannot rule a batch out.
  private readonly onTimer_ = (): void => {
    this.timer_ = null;
    this.wakeAt_ = Infinity;
    this.schedule_();
  };

  constructor(
    private readonly host_: Host,
    private readonly client_: FeedClient,
    private readonly queue_: SampleQueue,
    private readonly settings_: UplinkConfig,
    private readonly counters_: Counters,
    private readonly random_: () => number,
    private readonly events_: UplinkEvents,
    private readonly want_: () => void,
    private readonly reconciler_: Reconciler,
  ) {
    this.batchLimit_ = settings_.batch;
    this.lastSendAt_ = host_.now();
  }

  /** Spreads the first flush after start over `startJitterMs`. */
  begin_(): void {
    const now = this.host_.now();
    this.lastSendAt_ = now;
    this.backoffUntil_ = now + Math.floor(this.random_() * this.settings_.startJitterMs);
    this.schedule_();
  }

  /** Stops scheduling; a request in flight still completes (see `whenIdle_`). */
  end_(): void {
    this.stopped_ = true;
    this.cancelTimer_();
    this.watch_();
    this.draining_ = false;
    this.settleWaiters_(false);
    this.finishDrain_();
  }

  /** Resolves when no request is in flight. */
  whenIdle_(): Promise<void> {
    if (!this.inFlight_) return Promise.resolve();
    return new Promise((resolve) => {
      this.idled_ = resolve;
    });
  }

  /** Called after a sample was queued, when `watch_` asked for it. */
  queued_(): void {
    if (!this.inFlight_ && (this.timer_ === null || this.queue_.length >= this.batchLimit_)) this.schedule_();
  }

  /** Resolves true once everything queued now has left the queue; false at the first failure. */
  flush_(): Promise<boolean> {
    if (this.queue_.length === 0 && !this.inFlight_) return Promise.resolve(true);
    if (this.host_.now() < this.holdUntil_) return Promise.resolve(false);
    return new Promise((resolve) => {
      this.waiters_.push({ target: this.departedTotal_ + this.queue_.length, resolve });
      this.backoffUntil_ = 0;
      if (!this.inFlight_) this.fire_();
    });
  }

  /** For stop(): resolves once the queue is empty, riding out transient failures with the usual backoff. */
  drain_(): Promise<void> {
    this.draining_ = true;
    return new Promise((resolve) => {
      this.drained_ = resolve;
      if (!this.inFlight_) this.schedule_();
    });
  }

  private finishDrain_(): void {
    const resolve = this.drained_;
    this.drained_ = null;
    if (resolve !== null) resolve();
  }

  async run_(): Promise<void> {
    // In flight from the start, so that samples queued before it resumes ask for no second run.
    this.inFlight_ = true;
    this.watch_();
    // Resumes on a fresh stack: the lane starts this job from whatever queued the sample that filled a
    // batch (a sensor's read, an application's own call), and a send is deep (docs/moddable.md). Awaiting
    // a promise made once costs less XS compute than awaiting a new one (docs/xs.md).
    await this.freshStack_;
    if (this.badIndex_ === 0 || this.suspect_ === 1) this.setAsideIsolated_();
    const n = this.nextCount_();
    // Every way out of here ends below, where a stop() waiting for this run is told it ended.
    if (n === 0 || this.host_.now() < this.holdUntil_) this.inFlight_ = false;
    else if (this.reconciler_.pending_ > 0) await this.readBack_();
    else {
      // The sending phase, inline: a method of its own would cost an async call and an await per batch
      // (XS compute per sample, docs/xs.md).
      const body = this.queue_.take_(n);
      let outcome: BatchOutcome | null = null;
      let error: unknown = null;
      try {
        outcome = await this.client_.createFeedsEncoded(body, n, this.resourceAt_);
      } catch (e) {
        error = e;
      }
      this.inFlight_ = false;
      this.lastSendAt_ = this.host_.now();
      if (outcome !== null) this.delivered_(n, outcome);
      else this.failed_(n, error instanceof FeedError ? error : null, error);
    }
    const idled = this.idled_;
    this.idled_ = null;
    if (idled !== null) idled();
    this.schedule_();
  }

  /** The reconciling phase: reads the head batch back; it leaves the queue if it was stored, else goes again. */
  private async readBack_(): Promise<void> {
    const n = this.reconciler_.pending_;
    let verdict = UNDECIDED;
    let error: unknown = null;
    try {
      verdict = await this.reconciler_.check_(this.client_, this.queue_, this.host_.now());
    } catch (e) {
      error = e;
    }
    this.inFlight_ = false;
    if (verdict === STORED) {
      this.counters_.reconciled += n;
      this.counters_.sent += n;
      this.events_.report_('info', 'uplink: the ' + n + ' samples whose outcome was unknown were stored; not sending them again');
      this.acknowledged_(n);
      return;
    }
    if (error === null) {
      this.queue_.unlock();
      if (verdict === UNDECIDED) this.counters_.unresolved += n;
      this.events_.report_(verdict === UNDECIDED ? 'warn' : 'info', 'uplink: the ' + n + ' samples whose outcome was unknown ' +
        (verdict === UNDECIDED ? 'may or may not have been stored (the read-back cannot tell); sending them again' : 'were not stored; sending them again'));
      return;
    }
    const e = error instanceof FeedError ? error : null;
    // A read that never reached the service (refused, unreachable) is tried again: the batch could not be
    // sent either. One that reached it and failed gives up: the batch goes again undecided (at-least-once).
    const unreached = e !== null && !e.maybeDelivered && (e.kind === 'network' || e.kind === 'timeout');
    if (!unreached) {
      this.reconciler_.drop_();
      this.queue_.unlock();
      this.counters_.unresolved += n;
    }
    this.counters_.retries++;
    this.counters_.lastError = errorText(error);
    this.events_.report_('warn', 'uplink: reading back ' + n + ' samples whose outcome was unknown failed, ' +
      (unreached ? 'trying again: ' : 'sending them again: ') + errorText(error));
    this.backoff_(this.host_.now(), e === null ? -1 : e.retryAfterMs);
  }

  /** How many samples the next request carries (isolation sends the left half of the suspect range). */
  private nextCount_(): number {
    if (this.badIndex_ > 0) return Math.min(this.badIndex_, this.batchLimit_);
    if (this.suspect_ > 1) return Math.min(Math.floor(this.suspect_ / 2), this.batchLimit_);
    return Math.min(this.queue_.length, this.batchLimit_);
  }

  /** Sets aside the sample that isolation has pinned down (`badIndex_` 0 or `suspect_` 1), without sending it again. */
  private setAsideIsolated_(): void {
    this.badIndex_ = -1;
    this.suspect_ = 0;
    this.setAsideAt_(0, this.rejectReason_);
    this.queue_.shift(1);
    this.left_(1);
  }

  private setAsideAt_(i: number, reason: string): void {
    this.counters_.setAside++;
    this.events_.setAside_(this.queue_.resourceAt(i), this.queue_.valueAt(i), reason);
  }

  private delivered_(n: number, outcome: BatchOutcome): void {
    // The {success, failed} form: the service stored the rest; the failed ones are set aside.
    for (const r of outcome.rejected) this.setAsideAt_(r.index, r.reason);
    this.counters_.sent += n - outcome.rejected.length;
    this.counters_.batches++;
    this.reconciler_.created_(outcome.feeds, outcome.partial);
    this.authPaused_ = false;
    this.events_.presence_();
    this.acknowledged_(n);
  }

  /** The first `n` queued samples are finished (stored, or shown stored): they leave, and retries start over. */
  private acknowledged_(n: number): void {
    this.queue_.shift(n);
    if (this.badIndex_ > 0) this.badIndex_ -= n;
    // A prefix of the suspect range went through, so the refused sample is in the rest.
    if (this.suspect_ > 0) this.suspect_ -= n;
    this.attempt_ = 0;
    this.retrying_ = false;
    this.backoffUntil_ = 0;
    this.left_(n);
  }

  private failed_(n: number, e: FeedError | null, raw: unknown): void {
    this.queue_.unlock();
    const now = this.host_.now();
    if (e === null) {
      // Not the client's typed error: a fault of the host adapter. Treat it as transient.
      this.events_.report_('error', 'uplink: ' + errorText(raw));
      this.backoff_(now, -1);
      return;
    }
    this.counters_.lastError = e.message;
    if (e.kind === 'http' && e.status === 413) {
      if (n > 1) {
        this.batchLimit_ = Math.max(1, Math.floor(n / 2));
        this.events_.report_('warn', 'the service found ' + n + ' samples too large; batches now hold at most ' + this.batchLimit_);
      } else {
        this.badIndex_ = 0;
        this.rejectReason_ = e.message;
      }
      return;
    }
    if (blamesElements(e)) {
      const named = e.elementIndex;
      if (named >= 0 && named < n) {
        this.badIndex_ = named;
        this.suspect_ = 0;
      } else {
        this.badIndex_ = -1;
        this.suspect_ = n;
      }
      this.rejectReason_ = e.message;
      return;
    }
    if (e.retryable) {
      this.counters_.retries++;
      const reading = e.maybeDelivered && this.unknown_(n, now);
      this.events_.report_('warn', 'uplink: ' + e.message + (!e.maybeDelivered ? '' : reading
        ? ' (outcome unknown: ' + n + ' samples are read back before they are sent again)'
        : ' (outcome unknown: ' + n + ' samples may arrive twice)'));
      this.backoff_(now, e.retryAfterMs);
      // The read-back waits until the service has had time to finish the request (a backoff flush() skips).
      if (reading) this.backoffUntil_ = Math.max(this.backoffUntil_, this.reconciler_.settledAt_);
      return;
    }
    // 401/403, or an answer that blames the request as a whole: keep every sample, try again rarely.
    this.authPaused_ = isAuthError(e);
    this.holdUntil_ = now + this.settings_.authRetryMs;
    this.retrying_ = true;
    this.events_.report_('error', 'uplink paused: ' + e.message);
    this.settleWaiters_(false);
  }

  /**
   * The request for the first `n` samples may have been stored: they stay locked at the head to be read
   * back (true), or are sent again as they are, counted unresolved (false).
   */
  private unknown_(n: number, now: number): boolean {
    this.counters_.ambiguous += n;
    if (!this.reconciler_.begin_(n, this.queue_, now)) {
      this.counters_.unresolved += n;
      return false;
    }
    this.queue_.lock(n);
    return true;
  }

  private backoff_(now: number, retryAfterMs: number): void {
    const s = this.settings_;
    const delay = retryDelay(this.attempt_++, retryAfterMs, s.backoffBaseMs, s.backoffCapMs, this.random_);
    this.retrying_ = true;
    if (retryAfterMs >= 0) this.holdUntil_ = now + delay;
    else this.backoffUntil_ = now + delay;
    if (!this.draining_) this.settleWaiters_(false);
  }

  private left_(n: number): void {
    this.departedTotal_ += n;
    this.events_.departed_();
    this.settleWaiters_(true);
  }

  /** Samples evicted by overflow also count as gone for flush targets. */
  evicted_(): void {
    this.departedTotal_++;
  }

  private settleWaiters_(ok: boolean): void {
    if (this.waiters_.length === 0) return;
    const keep: typeof this.waiters_ = [];
    for (const w of this.waiters_) {
      if (!ok) w.resolve(false);
      else if (this.departedTotal_ >= w.target && !this.inFlight_) w.resolve(true);
      else keep.push(w);
    }
    this.waiters_ = keep;
  }

  /** Arms the one timer for the next attempt, or asks the lane now. */
  private schedule_(): void {
    this.plan_();
    this.watch_();
  }

  private plan_(): void {
    if (this.inFlight_ || this.stopped_) return;
    if (this.queue_.length === 0) {
      this.cancelTimer_();
      this.settleWaiters_(true);
      this.finishDrain_();
      return;
    }
    const now = this.host_.now();
    const s = this.settings_;
    const isolating = this.suspect_ > 0 || this.badIndex_ >= 0;
    const urgent = isolating || this.retrying_ || this.queue_.length >= this.batchLimit_ || this.waiters_.length > 0 || this.draining_;
    let at = urgent ? now : Math.min(this.lastSendAt_ + s.flushMs, this.queue_.oldestAt() + s.maxLatencyMs);
    at = Math.max(at, this.backoffUntil_, this.holdUntil_);
    if (at <= now) {
      this.fire_();
      return;
    }
    if (this.timer_ !== null && this.wakeAt_ <= at) return;
    this.cancelTimer_();
    this.wakeAt_ = at;
    this.timer_ = this.host_.setTimer(at - now, this.onTimer_);
  }

  private fire_(): void {
    this.cancelTimer_();
    this.want_();
    this.watch_();
  }

  /**
   * Tells the queue which sample needs `queued_()`, after every change of the state that decides it: every
   * one while no flush is pending (the first arms the timer), the one that fills a batch while the timer
   * runs, none while a request is out (its answer reschedules).
   */
  private watch_(): void {
    this.queue_.wake_(this.inFlight_ || this.stopped_ ? Infinity : this.timer_ === null ? 1 : this.batchLimit_);
  }

  private cancelTimer_(): void {
    if (this.timer_ !== null) this.host_.clearTimer(this.timer_);
    this.timer_ = null;
    this.wakeAt_ = Infinity;
  }
}
