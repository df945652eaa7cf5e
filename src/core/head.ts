// The head of the queue: the batch the uplink works on and what is known about it, in one explicit
// state (docs/architecture.md, "The head of the queue"), and the one owner of delivery state: the
// attempt count behind the backoff, when the next request may go, whether that wait is firm, when a
// read-back can rule a batch out, whether stop() drains, and the queue's lock. It holds the lock over
// every sample it reasons about (a batch out, a batch whose outcome is unknown, the range a refused
// element hides in), so that an overflow eviction, which takes only unlocked samples, cannot move what
// an index points at. Every change of it is one row of RULES (rules.ts), for an answer or for one of
// the agent's own moves, applied column by column in `apply`; the uplink carries out the step.
import type { Host } from './host';
import type { SampleQueue } from './queue';
import type { EngineEvent, Outcome, Rule, State, Wait } from './rules';
import { ruleFor } from './rules';
import type { UplinkConfig } from './config';
import { settleMs } from './config';
import { backoffDelay, MAX_RETRY_AFTER_MS } from './backoff';
import type { Ladder } from './backoff';
import { BatchBody } from './batch-body';

/** What an answer brings beyond its outcome (outcomes.ts), as far as the rules need it. */
export interface Answer {
  /** `refused element`, `gone`: the index of the element the service named. */
  element: number;
  /** `throttled`: the service's Retry-After in ms. */
  retryAfterMs: number;
  /** What the service said: why an isolated element is set aside. */
  reason: string;
}

/** What the uplink carries out after an answer: the rule, on the `n` samples the request carried. */
export interface Decision {
  rule: Rule;
  outcome: Outcome;
  from: State;
  n: number;
  /** `pause`: the head was paused for the same outcome before this try. */
  again: boolean;
}

const NO_ANSWER: Answer = Object.freeze({ element: -1, retryAfterMs: -1, reason: '' });

export interface HeadParts {
  queue: SampleQueue;
  settings: UplinkConfig;
  /** Batches carry their samples' ages, by this clock (`uplink.sendAge`); null: they do not. */
  clock: Pick<Host, 'now'> | null;
}

export class Head {
  state: State = 'idle';
  /** Samples at the head this state reasons about, all of them locked; 0 in idle and paused. */
  count = 0;
  /** Isolating: the index of the refused element when the service named it, else -1 (it is among `count`). */
  bad = -1;
  /** Isolating: why the service refused it. */
  reason = '';
  /** The samples of the request whose answer comes next: the batch sent, or read back. */
  out = 0;
  /** No request before this time. */
  at = 0;
  /** `at` holds for flush() and stop() too: Retry-After, a pause. */
  firm = false;
  /** The outcome behind the last answer: why the head pauses, or waits. */
  why: Outcome = 'acknowledged';
  /** A request failed and nothing was acknowledged since: the next one goes as soon as `at` allows. */
  retrying = false;
  /** stop() drains: the queue goes as soon as `at` allows, a read-back at once. */
  draining = false;
  /** Unknown: a read-back made from this time on can rule out that the service still stores the batch. */
  settledAt = 0;
  /** Backoff waits drawn since the last success: the exponent of the next one. */
  attempt = 0;
  /** When the first failure since the last success came: no backoff is longer than the failing lasted. */
  failingSince = -1;
  /** Current batch size: the configured one, halved by every 413. */
  limit: number;

  private readonly queue: SampleQueue;
  private readonly body: BatchBody;
  private readonly ladder: Ladder;
  private readonly settleMs: number;
  private readonly authRetryMs: number;
  private readonly startJitterMs: number;

  constructor(parts: HeadParts) {
    const s = parts.settings;
    this.queue = parts.queue;
    this.body = new BatchBody(parts.queue, parts.clock);
    this.limit = s.batch;
    this.ladder = { baseMs: s.backoffBaseMs, capMs: s.backoffCapMs };
    this.settleMs = settleMs(s);
    this.authRetryMs = s.authRetryMs;
    this.startJitterMs = s.startJitterMs;
  }

  /** Paused because the token was refused. */
  get authRefused(): boolean {
    return this.state === 'paused' && this.why === 'auth refused';
  }

  /** Isolation has pinned the refused element down to the first sample: set it aside without sending it again. */
  get pinned(): boolean {
    return this.state === 'isolating' && (this.bad === 0 || (this.bad < 0 && this.count === 1));
  }

  /**
   * The next request goes as soon as `at` allows, not when a flush falls due: a batch is out, unknown,
   * isolated or paused, a request failed since the last success, or stop() drains.
   */
  get eager(): boolean {
    return this.state !== 'idle' || this.retrying || this.draining;
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

  /** The first flush after start: not before the start jitter (`draw` of `startJitterMs`), nor a restored batch's wait. */
  begin(now: number, draw: number): void {
    this.apply('begin', 0, NO_ANSWER, now, draw);
  }

  /**
   * The first `n` samples were out in a request when the last run ended (durable storage kept the batch):
   * they are as a batch just sent, whose answer the rules then take as unknown.
   */
  resume(n: number, now: number): void {
    this.apply('resume', n, NO_ANSWER, now, 0);
  }

  /** The first `n` samples go out (the whole batch, or a prefix or half of an isolation): their body, locked. */
  send(n: number, now: number): string {
    this.apply('send', n, NO_ANSWER, now, 0);
    return this.body.take(n);
  }

  /** The first sample leaves without being stored: the pinned refused one, or a gone resource's (idle or paused). */
  dropFirst(now: number): void {
    this.apply('drop first', 1, NO_ANSWER, now, 0);
  }

  /**
   * flush() asks: a backoff or a read-back's wait ends now (a read-back made early decides "stored" or
   * "undecided", never "not stored": `settledAt` stays); a firm wait stays.
   */
  hurry(now: number): void {
    this.apply('hurry', 0, NO_ANSWER, now, 0);
  }

  /** stop() asks: as flush(), and while paused it tries once at once; from now on a read-back goes at once. */
  drain(now: number): void {
    this.apply('drain', 0, NO_ANSWER, now, 0);
  }

  /** What came back for the request out: the one change of the head after an answer. `draw`: this attempt's jitter. */
  answer(outcome: Outcome, answer: Answer, now: number, draw: number): Decision {
    // Only a read made once the service had time to finish can rule the batch out (hole 1 of issue 22).
    if (outcome === 'read not stored' && !this.settled(now)) throw new Error('delivery: a read-back made before ' + this.settledAt + ' decided "not stored"');
    const from = this.state;
    const n = this.out;
    const rule = this.apply(outcome, n, answer, now, draw);
    const again = this.why === outcome;
    this.why = outcome;
    return { rule, outcome, from, n, again };
  }

  /** The row of RULES for `event` in this state, applied column by column; `n`: the samples the event concerns. */
  private apply(event: EngineEvent, n: number, answer: Answer, now: number, draw: number): Rule {
    const rule = ruleFor(this.state, event);
    if (rule.attempt === 'reset') {
      this.attempt = 0;
      this.failingSince = -1;
    } else if (rule.fails && this.failingSince < 0) {
      this.failingSince = now;
    }
    if (rule.drains) this.draining = true;
    this.wait(rule.wait, answer, now, draw);
    if (rule.attempt === 'raise') this.attempt++;
    if (rule.retrying !== 'keep') this.retrying = rule.retrying === 'set';
    // What the step does to the head's own data; the rest of it is the uplink's to carry out.
    if (rule.step === 'acknowledge') this.queue.shift(n);
    else if (rule.step === 'set aside') this.queue.shift(1);
    else if (rule.step === 'halve') this.limit = Math.max(1, Math.floor(n / 2));
    else if (rule.step === 'read back') this.settledAt = now + (rule.wait === 'settle' ? this.settleMs : 0);
    else if (rule.step === 'send') this.out = n;
    this.hold(rule, event, n, answer);
    this.state = rule.to;
    this.queue.lock(this.count);
    return rule;
  }

  /** The `holds` column: which samples the head holds in its next state. */
  private hold(rule: Rule, event: EngineEvent, n: number, answer: Answer): void {
    switch (rule.holds) {
      case 'none':
        this.count = 0;
        this.bad = -1;
        break;
      case 'batch':
        this.count = n;
        this.out = n;
        this.bad = -1;
        break;
      case 'named': {
        const named = event !== 'refused unnamed';
        if (named && !(answer.element >= 0 && answer.element < n)) throw new Error('delivery: element ' + answer.element + ' refused in a batch of ' + n);
        this.count = named ? answer.element + 1 : n;
        this.bad = named ? answer.element : -1;
        this.reason = answer.reason;
        break;
      }
      case 'rest':
        // A prefix before the refused element went through: it is in the rest.
        this.count -= n;
        if (this.bad > 0) this.bad -= n;
        break;
      case 'same':
        break;
    }
  }

  /** The `wait` column: `at`, and whether it is firm. */
  private wait(wait: Wait, answer: Answer, now: number, draw: number): void {
    switch (wait) {
      case 'now':
        this.at = now;
        this.firm = false;
        break;
      case 'backoff':
        this.at = now + backoffDelay(this.ladder, this.attempt, now - this.failingSince, draw);
        this.firm = false;
        break;
      case 'retry-after':
        this.at = now + Math.max(backoffDelay(this.ladder, this.attempt, now - this.failingSince, draw), Math.min(answer.retryAfterMs, MAX_RETRY_AFTER_MS));
        this.firm = true;
        break;
      case 'settle':
        // stop() does not wait out the read-back's window; what the early read cannot decide goes again, counted.
        this.at = this.draining ? now : now + this.settleMs;
        this.firm = false;
        break;
      case 'auth':
        this.at = now + this.authRetryMs;
        this.firm = true;
        break;
      case 'start':
        this.at = Math.max(this.at, now + Math.floor(draw * this.startJitterMs));
        break;
      case 'ends':
        if (!this.firm && this.at > now) this.at = now;
        break;
      case 'ends, even firm':
        if (this.at > now) this.at = now;
        break;
      case 'as before':
        break;
    }
  }
}
