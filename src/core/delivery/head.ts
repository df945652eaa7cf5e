// The head of the queue: the batch the uplink works on and what is known about it, in one explicit
// state (docs/architecture.md, "The head of the queue"). It keeps the current Delivery (step.ts) and the
// queue's lock: it holds the lock over every sample it reasons about (a batch out, a batch whose outcome
// is unknown, the range a refused element hides in), so that an overflow eviction, which takes only
// unlocked samples, cannot move what an index points at. Every change of it is one step, for an answer or
// for one of the agent's own moves; the samples the step lets go leave the queue here, and the uplink
// carries out the rest of its effects.
import type { SampleQueue } from '../queue/queue';
import type { EngineEvent, Outcome, State } from './rules';
import type { UplinkConfig } from '../config';
import { settleMs } from '../config';
import type { Delivery, Effects, StepSettings } from './step';
import { firstDelivery, step } from './step';

/** What an answer brings beyond its outcome (outcomes.ts), as far as the rules need it. */
export interface Answer {
  /** `refused element`, `gone`: the index of the element the service named. */
  element: number;
  /** `throttled`: the service's Retry-After in ms. */
  retryAfterMs: number;
  /** What the service said: why an isolated element is set aside, what the log says. */
  reason: string;
}

const NO_ANSWER: Answer = Object.freeze({ element: -1, retryAfterMs: -1, reason: '' });

export interface HeadParts {
  queue: SampleQueue;
  settings: UplinkConfig;
}

export class Head {
  /** What is known now; replaced whole by every step. */
  private d: Delivery;
  private readonly queue: SampleQueue;
  private readonly settings: StepSettings;

  constructor(parts: HeadParts) {
    const s = parts.settings;
    this.queue = parts.queue;
    this.d = firstDelivery(s.batch);
    this.settings = Object.freeze({ ladder: Object.freeze({ baseMs: s.backoffBaseMs, capMs: s.backoffCapMs }), settleMs: settleMs(s), authRetryMs: s.authRetryMs, startJitterMs: s.startJitterMs });
  }

  get state(): State {
    return this.d.state;
  }
  get count(): number {
    return this.d.count;
  }
  get reason(): string {
    return this.d.reason;
  }
  get at(): number {
    return this.d.at;
  }
  get firm(): boolean {
    return this.d.firm;
  }
  /** A request failed and nothing was acknowledged since. */
  get retrying(): boolean {
    return this.d.retrying;
  }
  get draining(): boolean {
    return this.d.draining;
  }
  get limit(): number {
    return this.d.limit;
  }
  /** The whole of what is known, for a test to compare. */
  get delivery(): Delivery {
    return this.d;
  }

  /** Paused because the token was refused. */
  get authRefused(): boolean {
    return this.d.state === 'paused' && this.d.why === 'auth refused';
  }

  /** Isolation has pinned the refused element down to the first sample: set it aside without sending it again. */
  get pinned(): boolean {
    const d = this.d;
    return d.state === 'isolating' && (d.bad === 0 || (d.bad < 0 && d.count === 1));
  }

  /**
   * The next request goes as soon as `at` allows, not when a flush falls due: a batch is out, unknown,
   * isolated or paused, a request failed since the last success, or stop() drains.
   */
  get eager(): boolean {
    return this.d.state !== 'idle' || this.d.retrying || this.d.draining;
  }

  /** A read-back made now can decide "not stored". */
  settled(now: number): boolean {
    return now >= this.d.settledAt;
  }

  /** How many samples the next batch carries: the prefix before a refused element, or a half, at most `limit`. */
  nextCount(): number {
    const d = this.d;
    if (d.state === 'isolating') return Math.min(d.bad > 0 ? d.bad : Math.floor(d.count / 2), d.limit);
    return Math.min(this.queue.length, d.limit);
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

  /**
   * The first `n` samples go out (the whole batch, or a prefix or half of an isolation): they are locked,
   * a larger lock staying; the uplink encodes their body (queue/batch-body.ts).
   */
  send(n: number, now: number): void {
    this.apply('send', n, NO_ANSWER, now, 0);
    this.queue.lock(Math.max(n, this.queue.inFlight));
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

  /** What came back for the request out: its effects, for the uplink to carry out. `draw`: this attempt's jitter. */
  answer(outcome: Outcome, answer: Answer, now: number, draw: number): Effects {
    // Only a read made once the service had time to finish can rule the batch out (hole 1 of issue 22).
    if (outcome === 'read not stored' && !this.settled(now)) throw new Error('delivery: a read-back made before ' + this.d.settledAt + ' decided "not stored"');
    return this.apply(outcome, this.d.out, answer, now, draw);
  }

  /** One step; the samples it lets go leave the queue, and the lock follows what the head now holds. */
  private apply(event: EngineEvent, n: number, answer: Answer, now: number, draw: number): Effects {
    const t = step(this.d, event, { n, element: answer.element, retryAfterMs: answer.retryAfterMs, reason: answer.reason, now, draw }, this.settings);
    this.d = t.next;
    if (t.effects.leave > 0) this.queue.shift(t.effects.leave);
    this.queue.lock(t.next.count);
    return t.effects;
  }
}
