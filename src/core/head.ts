// The head of the queue: the batch the uplink works on and what is known about it, in one explicit
// state (docs/architecture.md, "The head of the queue"), and the one owner of delivery state: the
// attempt count behind the backoff, when the next request may go, whether that wait is firm, when a
// read-back can rule a batch out, and the queue's lock. It holds the lock over every sample it reasons
// about (a batch out, a batch whose outcome is unknown, the range a refused element hides in), so that
// an overflow eviction, which takes only unlocked samples, cannot move what an index points at. What
// came back changes it only through `apply`, by a rule of RULES (rules.ts); the uplink carries out the
// decision apply returns.
//
//   idle       nothing known; the next batch goes from `at` on (backoff, or at once)
//   sending    the first `count` samples are out in one request
//   unknown    the first `count` samples went out and may be stored: they are read back from `at` on
//   isolating  the service refused one of the first `count` samples: the one at `bad`, or one the
//              halves find (bisection); prefixes go until it is pinned down and set aside
//   paused     the service refused the request as a whole (a refused token, a redirect): nothing before `at`
import type { Host } from './host';
import type { SampleQueue } from './queue';
import type { Outcome, Rule, Step } from './rules';
import { backoffDelay, MAX_RETRY_AFTER_MS } from './backoff';
import type { Ladder } from './backoff';
import { BatchBody } from './batch-body';

export type State = 'idle' | 'sending' | 'unknown' | 'isolating' | 'paused';

/** What came back, classified (outcomes.ts), with what the rules need of it. */
export interface Answer {
  outcome: Outcome;
  /** The samples the request carried (a batch, or the batch read back). */
  n: number;
  /** `refused element`, `gone`: the index of the element the service named. */
  element: number;
  /** `throttled`: the service's Retry-After in ms. */
  retryAfterMs: number;
  /** What the service said: why an isolated element is set aside. */
  reason: string;
}

/** The clock and the settings a rule's wait needs. */
export interface Timing {
  now: number;
  /** A draw from [0, 1): the jitter of this attempt's backoff. */
  draw: number;
  /** `backoffBaseMs` and `backoffCapMs`. */
  backoff: Ladder;
  /** After a timeout, how long before a read-back can rule out that the service still stores the batch. */
  settleMs: number;
  authRetryMs: number;
  /** stop() drains: a read-back goes at once (and decides only "stored" or "undecided"). */
  draining: boolean;
}

/** What the uplink must do after an answer: the rule's step on the `answer.n` samples, and the rule's counts. */
export type Decision = { rule: Rule; answer: Answer; from: State } & (
  | { step: 'acknowledge' | 'isolate' | 'gone' }
  | { step: 'halve'; limit: number }
  | { step: 'read back' | 'read again' | 'back off' | 'send again'; at: number }
  /** `again`: the head was paused for the same outcome before this try. */
  | { step: 'pause'; at: number; again: boolean }
);

export class Head {
  state: State = 'idle';
  /** Samples at the head this state reasons about, all of them locked; 0 in idle and paused. */
  count = 0;
  /** Isolating: the index of the refused element when the service named it, else -1 (it is among `count`). */
  bad = -1;
  /** Isolating: why the service refused it. */
  reason = '';
  /** No request before this time. */
  at = 0;
  /** `at` holds for flush() and stop() too: Retry-After, a pause. */
  firm = false;
  /** The outcome behind the last rule applied: why the head pauses, or waits. */
  why: Outcome = 'acknowledged';
  /** A request failed and nothing was acknowledged since: the next one goes as soon as `at` allows. */
  retrying = false;
  /** Unknown: a read-back made from this time on can rule out that the service still stores the batch. */
  settledAt = 0;
  /** Backoff waits drawn since the last success: the exponent of the next one. */
  attempt = 0;
  /** When the first failure since the last success came: no backoff is longer than the failing lasted. */
  failingSince = -1;
  /** Current batch size: the configured one, halved by every 413. */
  limit: number;

  private readonly body: BatchBody;

  /** `clock`: batches carry their samples' ages, by this clock (`uplink.sendAge`). */
  constructor(private readonly queue: SampleQueue, batch: number, clock: Pick<Host, 'now'> | null) {
    this.limit = batch;
    this.body = new BatchBody(queue, clock);
  }

  /** Paused because the token was refused. */
  get authRefused(): boolean {
    return this.state === 'paused' && this.why === 'auth refused';
  }

  /** Isolation has pinned the refused element down to the first sample: set it aside without sending it again. */
  get pinned(): boolean {
    return this.state === 'isolating' && (this.bad === 0 || (this.bad < 0 && this.count === 1));
  }

  /** A read-back made now can decide "not stored". */
  settled(now: number): boolean {
    return now >= this.settledAt;
  }

  /** How many samples the next batch carries: the prefix before a refused element, or a half, at most `limit`. */
  nextCount(): number {
    if (this.state === 'isolating') return Math.min(this.bad > 0 ? this.bad : Math.floor(this.count / 2), this.limit);
    return Math.min(this.queue.length, this.limit);
  }

  /** The first flush after start: not before `at` (the start jitter), nor before a restored batch's wait (unreadable: a backoff). */
  start(at: number): void {
    this.at = Math.max(this.at, at);
  }

  /**
   * The first `n` samples were out in a request when the last run ended (durable storage kept the batch):
   * they are as a batch just sent, whose answer the rules then take as unknown.
   */
  resume(n: number): void {
    this.enter('sending', n);
  }

  /** The first `n` samples go out: their body, locked. */
  send(n: number): string {
    if (this.state !== 'isolating') this.enter('sending', n);
    return this.body.take(n);
  }

  /** The pinned sample leaves without being stored (set aside), or a gone resource's at the head (idle or paused: it holds nothing). */
  dropFirst(): void {
    this.queue.shift(1);
    if (this.state === 'isolating') this.enter('idle', 0);
  }

  /**
   * flush() or stop() asks: a backoff or a read-back's wait ends now (a read-back made early decides
   * "stored" or "undecided", never "not stored": `settledAt` stays); a firm wait stays, but for
   * `evenFirm` (stop() while paused tries once at once).
   */
  hurry(now: number, evenFirm: boolean): void {
    if ((evenFirm || !this.firm) && this.at > now) this.at = now;
  }

  /** Applies `rule` to what came back: the one change of the head after an answer. */
  apply(rule: Rule, answer: Answer, t: Timing): Decision {
    const from = this.state;
    const n = answer.n;
    // Only a read made once the service had time to finish can rule the batch out (hole 1 of issue 22).
    if (answer.outcome === 'read not stored' && !this.settled(t.now)) throw new Error('delivery: a read-back made before ' + this.settledAt + ' decided "not stored"');
    if (rule.attempt === 'reset') {
      this.attempt = 0;
      this.failingSince = -1;
    } else if (rule.fails && this.failingSince < 0) {
      this.failingSince = t.now;
    }
    let at = t.now;
    if (rule.wait === 'backoff' || rule.wait === 'retry-after') {
      at += backoffDelay(t.backoff, this.attempt, t.now - this.failingSince, t.draw);
      if (rule.wait === 'retry-after') at = Math.max(at, t.now + Math.min(answer.retryAfterMs, MAX_RETRY_AFTER_MS));
    } else if (rule.wait === 'settle') {
      at += t.settleMs;
    } else if (rule.wait === 'auth') {
      at += t.authRetryMs;
    }
    if (rule.attempt === 'raise') this.attempt++;
    const before = this.why;
    this.why = answer.outcome;
    if (rule.step !== 'acknowledge' && rule.step !== 'isolate' && rule.step !== 'gone') this.retrying = true;
    const step: Step = rule.step;
    switch (step) {
      case 'acknowledge':
        this.queue.shift(n);
        // A prefix before the refused element went through: it is in the rest.
        if (rule.to === 'isolating' && this.count > n) {
          this.count -= n;
          if (this.bad > 0) this.bad -= n;
        } else {
          this.enter('idle', 0);
        }
        this.at = 0;
        this.retrying = false;
        return { step, rule, answer, from };
      case 'gone':
        // The resource's samples wait while it is looked up (vanished.ts); the rest goes on.
        this.enter('idle', 0);
        this.at = 0;
        return { step, rule, answer, from };
      case 'isolate': {
        const named = answer.outcome !== 'refused unnamed';
        if (named && !(answer.element >= 0 && answer.element < n)) throw new Error('delivery: element ' + answer.element + ' refused in a batch of ' + n);
        this.enter('isolating', named ? answer.element + 1 : n);
        this.bad = named ? answer.element : -1;
        this.reason = answer.reason;
        this.at = 0;
        return { step, rule, answer, from };
      }
      case 'halve':
        this.limit = Math.max(1, Math.floor(n / 2));
        this.wait(rule.to, at, false);
        return { step, rule, answer, from, limit: this.limit };
      case 'read back':
        this.enter('unknown', n);
        this.settledAt = at;
        // stop() does not wait out the read-back's window; what the early read cannot decide goes again, counted.
        this.at = t.draining ? t.now : at;
        return { step, rule, answer, from, at: this.at };
      case 'read again':
        this.at = at;
        return { step, rule, answer, from, at };
      case 'pause':
        this.enter('paused', 0);
        this.at = at;
        this.firm = true;
        return { step, rule, answer, from, at, again: before === answer.outcome };
      default:
        // back off, send again: an isolation goes on after the wait; anything else starts over.
        this.wait(from === 'isolating' && rule.to === 'isolating' ? 'isolating' : 'idle', at, rule.wait === 'retry-after');
        return { step, rule, answer, from, at };
    }
  }

  private wait(to: State, at: number, firm: boolean): void {
    if (to !== 'isolating') this.enter('idle', 0);
    this.at = at;
    this.firm = firm;
  }

  private enter(state: State, count: number): void {
    this.state = state;
    this.count = count;
    this.bad = -1;
    this.firm = false;
    this.queue.lock(count);
  }
}
