// Sends the queue through operation 4. What is known about the batch at the head of the queue is the
// head's (head.ts), and every change to it is one row of RULES (rules.ts); this is the mechanism around
// them: it encodes the batch the head locked (queue/batch-body.ts), names what came back (outcomes.ts),
// hands it to the head, and carries out the step of the row (what leaves and its counts: departures.ts;
// reports), with one timer, its turn in the lane, and flush()'s waiters (flush-waiters.ts). It also makes the lookups of a resource the service says is gone (vanished.ts), whose samples it holds.
// A batch leaves the queue only when the service acknowledged it, when a read-back showed it stored,
// or when one bad element is isolated and set aside; everything else stays and is tried again.
// Delivery is at-least-once: only a request whose outcome is unknown can lead to a duplicate; such a
// batch is read back before it is sent again (reconcile.ts), and what that cannot decide is counted as
// unresolved.
import type { Host, Log } from '../host/host';
import { Alarm } from '../host/alarm';
import type { UplinkConfig } from '../config';
import type { BatchAnswer } from '../wire/answers';
import type { FeedClient } from '../wire/client';
import type { Counters } from '../host/counters';
import type { Head } from './head';
import type { Job, Lane } from '../requests/lane';
import type { Presence } from '../resources/presence';
import type { SampleQueue } from '../queue/queue';
import { BatchBody } from '../queue/batch-body';
import type { Reconciler } from './reconcile';
import type { Outcome } from './rules';
import type { Effects } from './step';
import { FailureReport } from '../requests/retry-ladder';
import type { SetAsides } from './set-aside';
import { Departures } from './departures';
import { FlushWaiters } from './flush-waiters';
import type { StoredQueue } from '../queue/stored-queue';
import type { Vanished } from './vanished';
import { FeedError, errorText } from '../wire/errors';
import { classifyBatch, classifyReadBack } from './outcomes';

/** What the uplink works with. */
export interface UplinkParts {
  host: Host;
  client: FeedClient;
  queue: SampleQueue;
  head: Head;
  /** Batches carry their samples' ages, by this clock (`uplink.sendAge`); null: they do not. */
  clock: Pick<Host, 'now'> | null;
  /** Durable storage's part: the backlog beyond the queue, departures, the batch about to go. */
  stored: Pick<StoredQueue, 'backlog' | 'checkpoint' | 'sending'>;
  reconciler: Reconciler;
  vanished: Vanished;
  setAsides: SetAsides;
  /** Told when a non-silent authenticated request reached the service. */
  presence: Pick<Presence, 'seen'>;
  settings: UplinkConfig;
  counters: Counters;
  random: () => number;
  lane: Lane;
  log: Log;
}

export class Uplink implements Job {
  wanted = false;
  private readonly host: Host;
  private readonly client: FeedClient;
  private readonly queue: SampleQueue;
  // Read-only here: the head changes only by its own moves (answer, send, hurry, ...), each a row of RULES.
  private readonly head: Readonly<Head>;
  /** Encodes the batch the head locked, straight from the queue's arrays. */
  private readonly body: BatchBody;
  private readonly stored: Pick<StoredQueue, 'backlog' | 'checkpoint' | 'sending'>;
  private readonly reconciler: Reconciler;
  private readonly vanished: Vanished;
  /** What leaves the head, counted; which samples a lookup holds. */
  private readonly departures: Departures;
  private readonly settings: UplinkConfig;
  private readonly counters: Counters;
  private readonly random: () => number;
  private readonly lane: Lane;
  private readonly log: Log;
  /** The batches' endpoint, said when it starts failing, keeps failing, and recovers. */
  private readonly report: FailureReport;
  /** The lane started a run that has not ended: from then until its answer is handled, nothing else is planned. */
  private busy = false;
  private lastSendAt: number;
  private readonly waiters = new FlushWaiters();
  private readonly freshStack = Promise.resolve();
  private readonly resourceAt = (i: number): number => this.queue.resourceAt(i);
  // The timers only wake the uplink; what is due is decided again. A host's timer may fire a little early
  // by its clock (Node's count whole milliseconds of the event loop's time, `now()` does not), and a
  // read-back made before its wait is over cannot rule a batch out. `alarm`: the next request about the
  // queue; `lookups`: the next lookup of a resource said to be gone.
  private readonly alarm: Alarm;
  private readonly lookups: Alarm;

  constructor(parts: UplinkParts) {
    this.host = parts.host;
    this.client = parts.client;
    this.queue = parts.queue;
    this.head = parts.head;
    this.body = new BatchBody(parts.queue, parts.clock);
    this.stored = parts.stored;
    this.reconciler = parts.reconciler;
    this.vanished = parts.vanished;
    this.departures = new Departures(parts);
    this.settings = parts.settings;
    this.counters = parts.counters;
    this.random = parts.random;
    this.lane = parts.lane;
    this.log = parts.log;
    this.report = new FailureReport('uplink', parts.log);
    this.lastSendAt = parts.host.now();
    this.alarm = new Alarm(parts.host, () => this.schedule());
    this.lookups = new Alarm(parts.host, () => this.lane.want(this));
  }

  /**
   * Before begin(): the first `n` samples were out in a request when the last run ended, so the service
   * may hold them; they are read back first, by the rule for an unknown outcome after a reset. The
   * request's connection died with the process, and the restart itself (a process starting, the lookup
   * answered before any read-back) is the wait for a service still at it. A read-back after the full
   * settle wait of a timeout would hold the queue back at every start: a process restarted more often
   * than that (the crash test kills it every 0.2-1.5 s) would never send again, and its queue would
   * overflow. A service that stores the batch later still makes a duplicate, never a loss. A batch no
   * read-back can decide goes again, counted unresolved.
   */
  resume(n: number): void {
    this.head.resume(n, this.host.now());
    const readable = this.reconciler.readable(n, this.queue);
    if (!readable) this.log('warn', 'uplink: ' + n + ' samples were out in a request when the last run ended and cannot be read back: they go again and may arrive twice');
    this.carryOut(this.decide(readable ? 'unknown after reset' : 'unknown unreadable', null), null, null);
  }

  /** Spreads the first flush after start over `startJitterMs`. */
  begin(): void {
    const now = this.host.now();
    this.alarm.begin();
    this.lookups.begin();
    this.lastSendAt = now;
    this.head.begin(now, this.random());
    this.schedule();
  }

  /** Stops scheduling; a request in flight still completes (see `whenIdle`). */
  end(): void {
    this.alarm.end();
    this.lookups.end();
    this.watch();
    this.settleWaiters(false);
    this.finishDrain();
  }

  /** Resolves when no request is in flight. */
  whenIdle(): Promise<void> {
    return this.busy ? this.waiters.idle.wait() : Promise.resolve();
  }

  /** Called after a sample was queued, when `watch` asked for it. */
  queued(): void {
    if (!this.busy && (!this.alarm.armed || this.queue.length >= this.head.limit)) this.schedule();
  }

  /** Resolves true once everything queued now has left the queue, its backlog too; false at the first failure. */
  flush(): Promise<boolean> {
    if (this.empty() && !this.busy) return Promise.resolve(true);
    const now = this.host.now();
    if (this.head.firm && now < this.head.at) return Promise.resolve(false);
    // The backlog reads into the queue in order: its newest sample will be at this position.
    const done = this.waiters.flush(this.queue.end + this.stored.backlog);
    this.head.hurry(now);
    if (!this.busy) this.fire();
    return done;
  }

  /**
   * For stop(): resolves once the queue is empty, riding out transient failures with the usual backoff.
   * A read-back goes at once, and so does one try while paused; refused again, it gives up. A resource
   * suspected gone is still looked up: its samples wait for that.
   */
  drain(): Promise<void> {
    this.head.drain(this.host.now());
    const done = this.waiters.drained.wait();
    if (!this.busy) this.schedule();
    return done;
  }

  /** One turn in the lane: a lookup that is due, else what the head needs next, if it is due. */
  async run(): Promise<void> {
    // Busy from the start, so that samples queued before it resumes ask for no second run.
    this.busy = true;
    this.watch();
    // Resumes on a fresh stack: the lane starts this job from whatever queued the sample that filled a
    // batch (a sensor's read, an application's own call), and a send is deep (docs/moddable.md).
    await this.freshStack;
    const now = this.host.now();
    if (this.lookups.running && now >= this.vanished.dueAt) {
      await this.vanished.lookUp();
    } else if (this.alarm.running && now >= this.head.at) {
      if (this.head.state === 'unknown') await this.readBack();
      else await this.sendNext();
    }
    this.busy = false;
    this.waiters.idle.wake();
    this.schedule();
  }

  /** Sets aside what needs no request, then sends the next batch, if any. */
  private async sendNext(): Promise<void> {
    this.departures.setAsideUnsent(this.host.now());
    const n = this.departures.nextCount();
    if (n === 0 || !this.alarm.running) return;
    this.head.send(n, this.host.now());
    const body = this.body.encode(0, n);
    this.stored.sending(n);
    let answer: BatchAnswer | null = null;
    let error: unknown = null;
    try {
      answer = await this.client.createFeedsEncoded(body, n, this.resourceAt);
    } catch (e) {
      error = e;
    }
    this.busy = false;
    this.lastSendAt = this.host.now();
    const e = error instanceof FeedError ? error : null;
    if (answer === null && e === null) this.log('error', 'uplink: ' + errorText(error));
    const readable = e !== null && e.maybeDelivered && this.reconciler.readable(n, this.queue);
    // A 404 naming an element may mean its resource is gone, unless a lookup found it a minute ago.
    const i = e === null ? -1 : e.elementIndex;
    const mayBeGone = e !== null && e.status === 404 && i >= 0 && i < n && this.vanished.mayBeGone(this.queue.resourceAt(i));
    // In the `{success, failed}` form the failed ones are set aside, read before the batch leaves the queue.
    if (answer !== null) for (const r of answer.rejected) this.departures.setAsideAt(r.index, r.reason, false);
    this.carryOut(this.decide(classifyBatch(n, answer !== null, e, readable, mayBeGone), e), answer, e);
  }

  /** Reads the batch whose outcome is unknown back: it leaves the queue if it was stored, else goes again. */
  private async readBack(): Promise<void> {
    const n = this.head.count;
    const settled = this.head.settled(this.host.now());
    let verdict = -1;
    let error: unknown = null;
    try {
      verdict = await this.reconciler.check(this.client, this.queue, n, settled);
    } catch (e) {
      error = e;
    }
    this.busy = false;
    const e = error instanceof FeedError ? error : null;
    if (error !== null && e === null) this.log('error', 'uplink: ' + errorText(error));
    this.carryOut(this.decide(classifyReadBack(error === null, verdict, e, settled), e), null, e);
  }

  /** The head takes the answer: one step. */
  private decide(outcome: Outcome, e: FeedError | null): Effects {
    // A 413 for a batch of one refuses its element 0, which names no index.
    const answer = e === null ? { element: -1, retryAfterMs: -1, reason: '' } : { element: Math.max(0, e.elementIndex), retryAfterMs: e.retryAfterMs, reason: e.message };
    return this.head.answer(outcome, answer, this.host.now(), this.random());
  }

  /** Carries out a step's effects: counts, reports, set-asides, the log; the head has moved already. */
  private carryOut(fx: Effects, answer: BatchAnswer | null, e: FeedError | null): void {
    const now = this.host.now();
    if (e !== null) this.counters.lastError = e.message;
    this.counters.ambiguous += fx.ambiguous;
    this.counters.unresolved += fx.unresolved;
    if (fx.retried) this.counters.retries++;
    if (fx.stored === 'answered') this.departures.delivered(fx.leave, answer as BatchAnswer);
    else if (fx.stored === 'found') this.departures.reconciled(fx.leave);
    if (fx.stored !== 'no' && fx.leave > 0) this.settleWaiters(true);
    // Looked up before anything is set aside; the samples before its first one go on meanwhile.
    if (fx.suspect) this.vanished.suspect(this.queue.resourceAt((e as FeedError).elementIndex), (e as FeedError).message);
    if (fx.stored !== 'no') this.report.recovered(now);
    // A failing endpoint is said when its state changes (retry-ladder.ts); each try only at debug.
    if (fx.failing && !fx.paused) {
      if (!this.report.failed(now, fx.say === '' ? 'a fault of the host' : fx.say) && fx.say !== '') this.log('debug', 'uplink: ' + fx.say);
    } else if (fx.say !== '') {
      this.log(fx.level, 'uplink: ' + fx.say);
    }
    // stop() tried once at once: the service still refuses, so what is queued stays (in durable storage, if any).
    if (fx.paused && this.head.draining) this.finishDrain();
    if (fx.failing && (fx.paused || !this.head.draining)) this.settleWaiters(false);
  }

  /** Nothing waits: not in the queue, not in the backlog. */
  private empty(): boolean {
    return this.queue.length === 0 && this.stored.backlog === 0;
  }

  private settleWaiters(ok: boolean): void {
    this.waiters.settle(ok, this.busy, this.queue.end - this.queue.length, this.empty());
  }

  private finishDrain(): void {
    this.waiters.drained.wake();
  }

  /** Arms the timers for the next lookup and the next attempt, or asks the lane now. */
  private schedule(): void {
    this.plan();
    this.watch();
  }

  private plan(): void {
    if (this.busy || !this.alarm.running) return;
    const now = this.host.now();
    const lookupAt = this.vanished.dueAt;
    if (lookupAt <= now) {
      this.lookups.cancel();
      this.lane.want(this);
    } else if (lookupAt < Infinity && (!this.lookups.armed || this.lookups.dueAt > lookupAt)) {
      this.lookups.set(lookupAt, now);
    }
    if (this.queue.length === 0) {
      this.alarm.cancel();
      // A backlog that could not be read in (a storage error) waits for the next sample to try again.
      if (this.stored.backlog > 0) return;
      this.settleWaiters(true);
      this.finishDrain();
      return;
    }
    if (this.departures.held()) {
      this.alarm.cancel();
      return;
    }
    const s = this.settings;
    const urgent = this.head.eager || this.queue.length >= this.head.limit || this.waiters.count > 0;
    let at = urgent ? now : Math.min(this.lastSendAt + s.flushMs, this.queue.oldestAt() + s.maxLatencyMs);
    at = Math.max(at, this.head.at);
    if (at <= now) {
      this.fire();
      return;
    }
    if (this.alarm.armed && this.alarm.dueAt <= at) return;
    this.alarm.set(at, now);
  }

  private fire(): void {
    this.alarm.cancel();
    this.lane.want(this);
    this.watch();
  }

  /**
   * Tells the queue which sample needs `queued()`, after every change of the state that decides it: every
   * one while no flush is pending (the first arms the timer), the one that fills a batch while the timer
   * runs, none while a run is under way (its answer reschedules).
   */
  private watch(): void {
    this.queue.wake(this.busy || !this.alarm.running ? Infinity : this.alarm.armed ? this.head.limit : 1);
  }
}
