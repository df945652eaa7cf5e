// Sends the queue through operation 4. What is known about the batch at the head of the queue is the
// head's (head.ts); what to do after every answer is decided by one pure function (decide.ts); this is
// the mechanism between them: one timer, the lane, flush()'s waiters and stop()'s drain. A batch leaves
// the queue only when the service acknowledged it, when a read-back showed it stored, or when one bad
// element is isolated and set aside; everything else stays and is tried again. Delivery is
// at-least-once: only a request whose outcome is unknown can lead to a duplicate; such a batch is read
// back before it is sent again (reconcile.ts), and what that cannot decide is counted as unresolved.
import type { Host, SampleValue, TimerHandle } from './host';
import type { UplinkConfig } from './config';
import { settleMs } from './config';
import type { BatchOutcome, FeedClient } from './client';
import type { Counters } from './counters';
import type { Job } from './lane';
import type { SampleQueue } from './queue';
import { FeedError, errorText } from './errors';
import { backoffDelay } from './backoff';
import type { Reconciler } from './reconcile';
import type { Vanished } from './vanished';
import { Head } from './head';
import type { Came, Decision, Timing } from './decide';
import { ACKNOWLEDGE, BISECT, GONE, HALVE, IDLE, ISOLATING, PAUSE, PAUSED, READ_BACK, SEND_AGAIN, SET_ASIDE, UNDECIDED, UNKNOWN, decide } from './decide';

export interface UplinkEvents {
  /** A sample left the queue without being stored; `quiet`: the reason was reported once already. */
  setAside(resource: number, value: SampleValue, reason: string, quiet: boolean): void;
  /** Samples left the head of the queue: the durable log may be checkpointed. */
  departed(): void;
  /** A non-silent authenticated request reached the service. */
  presence(): void;
  /** A request failed (`true`; storage that writes when needed writes from now on) or one was acknowledged. */
  failing(failing: boolean): void;
  report(level: 'warn' | 'error' | 'info', message: string): void;
}

export class Uplink implements Job {
  wanted = false;
  private readonly head: Head;
  /** Current batch size: the configured one, halved by every 413. */
  private limit: number;
  /** The lane started a run that has not ended: from then until its answer is handled, nothing else is planned. */
  private busy = false;
  private attempt = 0;
  private lastSendAt: number;
  private readonly settleMs: number;
  private timer: TimerHandle | null = null;
  private wakeAt = Infinity;
  /** flush() calls: each resolves once the queue's position passed `target`, or false at a failure. */
  private waiters: { target: number; resolve: (done: boolean) => void }[] = [];
  private draining = false;
  private drained: (() => void) | null = null;
  private idled: (() => void) | null = null;
  private stopped = false;
  private readonly freshStack = Promise.resolve();
  private readonly resourceAt = (i: number): number => this.queue.resourceAt(i);
  // The timer only wakes the uplink; what is due is decided again. A host's timer may fire a little early
  // by its clock (Node's count whole milliseconds of the event loop's time, `now()` does not), and a
  // read-back made before its wait is over cannot rule a batch out.
  private readonly onTimer = (): void => {
    this.timer = null;
    this.wakeAt = Infinity;
    this.schedule();
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
    private readonly reconciler: Reconciler,
    private readonly vanished: Vanished,
  ) {
    this.head = new Head(queue);
    this.limit = settings.batch;
    this.lastSendAt = host.now();
    this.settleMs = settleMs(settings);
  }

  /** The service refuses the token: nothing is sent until `authRetryMs` passed. */
  get authPaused(): boolean {
    return this.head.state === PAUSED && this.head.authRefused;
  }

  get batchLimit(): number {
    return this.limit;
  }

  /** Spreads the first flush after start over `startJitterMs`. */
  begin(): void {
    const now = this.host.now();
    this.lastSendAt = now;
    this.head.at = now + Math.floor(this.random() * this.settings.startJitterMs);
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
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => {
      this.idled = resolve;
    });
  }

  /** Called after a sample was queued, when `watch` asked for it. */
  queued(): void {
    if (!this.busy && (this.timer === null || this.queue.length >= this.limit)) this.schedule();
  }

  /** Resolves true once everything queued now has left the queue; false at the first failure. */
  flush(): Promise<boolean> {
    if (this.queue.length === 0 && !this.busy) return Promise.resolve(true);
    const now = this.host.now();
    if (this.head.firm && now < this.head.at) return Promise.resolve(false);
    return new Promise((resolve) => {
      this.waiters.push({ target: this.queue.end, resolve });
      this.head.hurry(now, false);
      if (!this.busy) this.fire();
    });
  }

  /**
   * For stop(): resolves once the queue is empty, riding out transient failures with the usual backoff.
   * A read-back goes at once, and so does one try while the token is refused; refused again, it gives up.
   */
  drain(): Promise<void> {
    this.draining = true;
    this.head.hurry(this.host.now(), this.head.state === PAUSED);
    return new Promise((resolve) => {
      this.drained = resolve;
      if (!this.busy) this.schedule();
    });
  }

  /** One turn in the lane: what the head needs next, if it is due. */
  async run(): Promise<void> {
    // Busy from the start, so that samples queued before it resumes ask for no second run.
    this.busy = true;
    this.watch();
    // Resumes on a fresh stack: the lane starts this job from whatever queued the sample that filled a
    // batch (a sensor's read, an application's own call), and a send is deep (docs/moddable.md).
    await this.freshStack;
    if (!this.stopped && this.host.now() >= this.head.at) {
      if (this.head.state === UNKNOWN) await this.readBack();
      else await this.sendNext();
    }
    this.busy = false;
    const idled = this.idled;
    this.idled = null;
    if (idled !== null) idled();
    this.schedule();
  }

  /** Sets aside what needs no request, then sends the next batch, if any. */
  private async sendNext(): Promise<void> {
    this.setAsideUnsent();
    const n = this.nextCount();
    if (n === 0 || this.stopped) return;
    const body = this.head.send(n);
    let outcome: BatchOutcome | null = null;
    let error: unknown = null;
    try {
      outcome = await this.client.createFeedsEncoded(body, n, this.resourceAt);
    } catch (e) {
      error = e;
    }
    this.busy = false;
    this.lastSendAt = this.host.now();
    const e = error instanceof FeedError ? error : null;
    if (outcome === null && e === null) this.events.report('error', 'uplink: ' + errorText(error));
    const readable = e !== null && e.maybeDelivered && this.reconciler.readable(n, this.queue);
    const came: Came = { answered: outcome !== null, verdict: -1, error: e };
    this.apply(decide(n, came, { state: this.head.state, readable }, this.timing()), n, outcome, e);
  }

  /** Reads the batch whose outcome is unknown back: it leaves the queue if it was stored, else goes again. */
  private async readBack(): Promise<void> {
    const n = this.head.count;
    const settled = this.host.now() >= this.head.settledAt;
    const came: Came = { answered: false, verdict: UNDECIDED, error: null };
    let error: unknown = null;
    try {
      came.verdict = await this.reconciler.check(this.client, this.queue, n, settled);
      came.answered = true;
    } catch (e) {
      error = e;
      came.error = e instanceof FeedError ? e : null;
    }
    this.busy = false;
    if (error !== null && came.error === null) this.events.report('error', 'uplink: ' + errorText(error));
    this.apply(decide(n, came, { state: UNKNOWN, readable: true }, this.timing()), n, null, came.error);
  }

  private timing(): Timing {
    const s = this.settings;
    return {
      now: this.host.now(),
      backoffMs: backoffDelay(this.attempt, s.backoffBaseMs, s.backoffCapMs, this.random),
      settleMs: this.settleMs,
      authRetryMs: s.authRetryMs,
    };
  }

  /** Carries a decision out: counts, reports, and moves the head. `n`: the samples the request carried. */
  private apply(d: Decision, n: number, outcome: BatchOutcome | null, e: FeedError | null): void {
    const readingBack = this.head.state === UNKNOWN;
    const message = e === null ? '' : e.message;
    if (e !== null) this.counters.lastError = message;
    switch (d.kind) {
      case ACKNOWLEDGE:
        if (readingBack) this.reconciled(n);
        else this.delivered(n, outcome as BatchOutcome);
        return;
      case SET_ASIDE:
      case BISECT:
        this.head.isolate(d.kind === BISECT ? -1 : d.n, d.n, message);
        return;
      case GONE:
        this.vanished.mark(this.queue.resourceAt(d.n), message);
        this.head.isolate(d.n, d.n, message);
        return;
      case HALVE:
        this.limit = d.n;
        this.events.report('warn', 'the service found ' + n + ' samples too large; batches now hold at most ' + d.n);
        this.head.wait(this.host.now(), false);
        return;
      case PAUSE:
        this.head.pause(d.at, d.n === 1);
        this.events.report('error', 'uplink paused: ' + message);
        this.failed(true);
        // stop() tried once at once: the service still refuses, so what is queued stays (in durable storage, if any).
        if (this.draining) this.finishDrain();
        return;
      case SEND_AGAIN:
        if (d.unresolved) this.counters.unresolved += n;
        this.events.report(d.unresolved ? 'warn' : 'info', 'uplink: the ' + n + ' samples whose outcome was unknown ' + (d.unresolved
          ? 'may or may not have been stored (the read-back cannot tell); sending them again' : 'were not stored; sending them again'));
        this.head.wait(d.at, false);
        return;
    }
    // A transient failure: BACK_OFF or READ_BACK.
    this.attempt++;
    if (e !== null) this.counters.retries++;
    if (readingBack) {
      this.events.report('warn', 'uplink: reading back ' + n + ' samples whose outcome was unknown failed, ' +
        (d.kind === READ_BACK ? 'trying again: ' : 'sending them again: ') + (e === null ? 'a fault of the host' : message));
      if (d.kind === READ_BACK) this.head.readAgainAt(d.at);
      else this.giveUpReadBack(n, d);
    } else {
      const unknown = e !== null && e.maybeDelivered;
      if (unknown) this.counters.ambiguous += n;
      if (d.unresolved) this.counters.unresolved += n;
      if (e !== null) {
        this.events.report('warn', 'uplink: ' + message + (!unknown ? '' : d.kind === READ_BACK
          ? ' (outcome unknown: ' + n + ' samples are read back before they are sent again)'
          : ' (outcome unknown: ' + n + ' samples may arrive twice)'));
      }
      if (d.kind === READ_BACK) {
        this.reconciler.freeze();
        // stop() does not wait out a read-back's window: what an early read cannot decide goes again, counted.
        this.head.unknown(n, this.draining ? Math.min(d.at, this.host.now()) : d.at, d.at);
      } else {
        this.head.wait(d.at, d.firm);
      }
    }
    this.failed(!this.draining);
  }

  private giveUpReadBack(n: number, d: Decision): void {
    this.reconciler.thaw();
    this.counters.unresolved += n;
    this.head.wait(d.at, d.firm);
  }

  /** The service stored the batch; in the `{success, failed}` form the failed ones are set aside. */
  private delivered(n: number, outcome: BatchOutcome): void {
    for (const r of outcome.rejected) this.setAsideAt(r.index, r.reason, false);
    this.counters.sent += n - outcome.rejected.length;
    this.counters.batches++;
    this.reconciler.created(outcome.feeds, outcome.partial);
    this.events.presence();
    this.acknowledged(n);
  }

  /** The read-back showed the batch stored. */
  private reconciled(n: number): void {
    this.counters.reconciled += n;
    this.counters.sent += n;
    this.events.report('info', 'uplink: the ' + n + ' samples whose outcome was unknown were stored; not sending them again');
    this.acknowledged(n);
  }

  private acknowledged(n: number): void {
    this.head.acknowledge(n);
    this.attempt = 0;
    this.events.failing(false);
    this.left(n);
  }

  /** A request failed: flush() says so, but not to stop(), which rides it out. */
  private failed(settle: boolean): void {
    this.events.failing(true);
    if (settle) this.settleWaiters(false);
  }

  /** How many samples the next request carries: the head's count, short of a gone resource's sample. */
  private nextCount(): number {
    const n = this.head.nextCount(this.limit);
    if (this.vanished.count === 0 || this.head.state === ISOLATING) return n;
    for (let i = 1; i < n; i++) if (this.vanished.has(this.queue.resourceAt(i))) return i;
    return n;
  }

  /** Sets aside, without a request, the refused sample isolation pinned down and the samples of gone resources at the head. */
  private setAsideUnsent(): void {
    for (;;) {
      if (this.head.pinned) {
        this.setAsideAt(0, this.head.reason, false);
      } else if (this.vanished.count > 0 && this.head.state === IDLE && this.queue.length > 0 && this.vanished.has(this.queue.resourceAt(0))) {
        this.setAsideAt(0, 'resource ' + this.queue.resourceAt(0) + ' is gone', true);
      } else {
        return;
      }
      this.head.dropFirst();
      this.left(1);
    }
  }

  private setAsideAt(i: number, reason: string, quiet: boolean): void {
    this.counters.setAside++;
    this.events.setAside(this.queue.resourceAt(i), this.queue.valueAt(i), reason, quiet);
  }

  private left(n: number): void {
    if (n === 0) return;
    this.events.departed();
    this.settleWaiters(true);
  }

  private settleWaiters(ok: boolean): void {
    if (this.waiters.length === 0) return;
    const departed = this.queue.end - this.queue.length;
    const keep: typeof this.waiters = [];
    for (const w of this.waiters) {
      if (!ok) w.resolve(false);
      else if (departed >= w.target && !this.busy) w.resolve(true);
      else keep.push(w);
    }
    this.waiters = keep;
  }

  private finishDrain(): void {
    const resolve = this.drained;
    this.drained = null;
    if (resolve !== null) resolve();
  }

  /** Arms the one timer for the next attempt, or asks the lane now. */
  private schedule(): void {
    this.plan();
    this.watch();
  }

  private plan(): void {
    if (this.busy || this.stopped) return;
    if (this.queue.length === 0) {
      this.cancelTimer();
      this.settleWaiters(true);
      this.finishDrain();
      return;
    }
    const now = this.host.now();
    const s = this.settings;
    const urgent = this.head.state !== IDLE || this.head.retrying || this.queue.length >= this.limit || this.waiters.length > 0 || this.draining;
    let at = urgent ? now : Math.min(this.lastSendAt + s.flushMs, this.queue.oldestAt() + s.maxLatencyMs);
    at = Math.max(at, this.head.at);
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
   * runs, none while a run is under way (its answer reschedules).
   */
  private watch(): void {
    this.queue.wake(this.busy || this.stopped ? Infinity : this.timer === null ? 1 : this.limit);
  }

  private cancelTimer(): void {
    if (this.timer !== null) this.host.clearTimer(this.timer);
    this.timer = null;
    this.wakeAt = Infinity;
  }
}
