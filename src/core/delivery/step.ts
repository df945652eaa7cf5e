// Delivery as a pure step, the shape h11 gives a protocol: from what is known about the head of the queue
// (a Delivery) and one event (an answer's outcome, or one of the agent's own moves), the next Delivery and
// the effects to carry out: samples that leave the queue, what is counted, what is logged, whether flush()
// hears of a failure. This is the one place that reads RULES (rules.ts); the head (head.ts) keeps the
// current Delivery and the queue's lock, the uplink (uplink.ts) carries the effects out. Nothing here
// touches the queue, a clock or the network, so a test can walk every pair and every cycle of the table.
import type { EngineEvent, Move, Outcome, Rule, State, Wait } from './rules';
import { ruleFor } from './rules';
import { backoffDelay, MAX_RETRY_AFTER_MS } from '../requests/backoff';
import type { Ladder } from '../requests/backoff';
import type { LogLevel } from '../host/host';

/** What is known about the batch at the head of the queue (docs/architecture.md, "The head of the queue"). */
export interface Delivery {
  readonly state: State;
  /** Samples at the head this state reasons about, all of them locked; 0 in idle and paused. */
  readonly count: number;
  /** Isolating: the index of the refused element when the service named it, else -1 (it is among `count`). */
  readonly bad: number;
  /** Isolating: why the service refused it. */
  readonly reason: string;
  /** The samples of the request whose answer comes next: the batch sent, or read back. */
  readonly out: number;
  /** No request before this time. */
  readonly at: number;
  /** `at` holds for flush() and stop() too: Retry-After, a pause. */
  readonly firm: boolean;
  /** The outcome behind the last answer: why the head pauses, or waits. */
  readonly why: Outcome;
  /** A request failed and nothing was acknowledged since: the next one goes as soon as `at` allows. */
  readonly retrying: boolean;
  /** stop() drains: the queue goes as soon as `at` allows, a read-back at once. */
  readonly draining: boolean;
  /** Unknown: a read-back made from this time on can rule out that the service still stores the batch. */
  readonly settledAt: number;
  /** The uplink's retry ladder: backoff waits drawn since the last success, the exponent of the next one. */
  readonly attempt: number;
  /** Current batch size: the configured one, halved by every 413. */
  readonly limit: number;
}

/** The settings a step reads. */
export interface StepSettings {
  readonly ladder: Ladder;
  readonly settleMs: number;
  readonly authRetryMs: number;
  readonly startJitterMs: number;
}

/** What an event brings beyond its name. */
export interface StepInput {
  /** The samples the event concerns: the batch sent or resumed, the request answered, 1 for `drop first`. */
  readonly n: number;
  /** `refused element`, `gone`: the index of the element the service named. */
  readonly element: number;
  /** `throttled`: the service's Retry-After in ms. */
  readonly retryAfterMs: number;
  /** What the service or the network said: why a sample is set aside, what the log says. */
  readonly reason: string;
  readonly now: number;
  /** This step's jitter, from [0, 1). */
  readonly draw: number;
}

/** What the uplink carries out after a step; the head has applied `leave` and the lock already. */
export interface Effects {
  /** Samples that left the head of the queue: acknowledged, found stored by a read-back, or the one set aside. */
  readonly leave: number;
  /** They were stored: `answered` (the service acknowledged them) or `found` (a read-back showed them stored). */
  readonly stored: 'answered' | 'found' | 'no';
  /** The resource of the element the service named is suspected gone: look it up. */
  readonly suspect: boolean;
  /** Counted: samples whose outcome is unknown, samples that go again unknowing, one retry. */
  readonly ambiguous: number;
  readonly unresolved: number;
  readonly retried: boolean;
  /** A request is failing: flush() hears of it, and the log hears of it as the endpoint's state. */
  readonly failing: boolean;
  /** The head paused: what is queued waits for the service's word; a drain ends. */
  readonly paused: boolean;
  /** What the log says of this step ('' nothing), at `level`. */
  readonly say: string;
  readonly level: LogLevel;
}

export interface Transition {
  readonly next: Delivery;
  readonly effects: Effects;
}

/** The head before the first event: nothing known, `limit` the configured batch. */
export function firstDelivery(limit: number): Delivery {
  return { state: 'idle', count: 0, bad: -1, reason: '', out: 0, at: 0, firm: false, why: 'acknowledged', retrying: false, draining: false, settledAt: 0, attempt: 0, limit };
}

/** The one step: `event` in `d`'s state, by its row of RULES; a pair with no row throws, and nothing changes. */
export function step(d: Delivery, event: EngineEvent, input: StepInput, s: StepSettings): Transition {
  const rule = ruleFor(d.state, event);
  const n = input.n;
  const now = input.now;
  const draining = d.draining || rule.drains;
  const attempt = rule.attempt === 'reset' ? 0 : d.attempt;
  const wait = waitOf(rule.wait, d, attempt, draining, input, s);
  let count = d.count, bad = d.bad, reason = d.reason, out = d.out;
  switch (rule.holds) {
    case 'none':
      count = 0;
      bad = -1;
      break;
    case 'batch':
      count = n;
      out = n;
      bad = -1;
      break;
    case 'named': {
      const named = event !== 'refused unnamed';
      if (named && !(input.element >= 0 && input.element < n)) throw new Error('delivery: element ' + input.element + ' refused in a batch of ' + n);
      count = named ? input.element + 1 : n;
      bad = named ? input.element : -1;
      reason = input.reason;
      break;
    }
    case 'rest':
      // A prefix before the refused element went through: it is in the rest.
      count -= n;
      if (bad > 0) bad -= n;
      break;
    case 'same':
      break;
  }
  if (rule.step === 'send') out = n;
  const outcome = isMove(event) ? d.why : event;
  const next: Delivery = {
    state: rule.to,
    count,
    bad,
    reason,
    out,
    at: wait.at,
    firm: wait.firm,
    why: outcome,
    retrying: rule.retrying === 'keep' ? d.retrying : rule.retrying === 'set',
    draining,
    settledAt: rule.step === 'read back' ? now + (rule.wait === 'settle' ? s.settleMs : 0) : d.settledAt,
    attempt: rule.attempt === 'raise' ? attempt + 1 : attempt,
    limit: rule.step === 'halve' ? Math.max(1, Math.floor(n / 2)) : d.limit,
  };
  return { next, effects: effectsOf(rule, d, next, event, input) };
}

const MOVES: readonly EngineEvent[] = Object.freeze(['begin', 'resume', 'send', 'drop first', 'hurry', 'drain']);

/** One of the agent's own moves, not an answer. */
export function isMove(event: EngineEvent): event is Move {
  return MOVES.indexOf(event) >= 0;
}

/** The `wait` column: the next `at`, and whether it is firm; `attempt` is the count this wait is drawn at. */
function waitOf(w: Wait, d: Delivery, attempt: number, draining: boolean, input: StepInput, s: StepSettings): { at: number; firm: boolean } {
  const now = input.now;
  switch (w) {
    case 'now':
      return { at: now, firm: false };
    case 'backoff':
      return { at: now + backoffDelay(s.ladder, attempt, input.draw), firm: false };
    case 'retry-after':
      return { at: now + Math.max(backoffDelay(s.ladder, attempt, input.draw), Math.min(input.retryAfterMs, MAX_RETRY_AFTER_MS)), firm: true };
    case 'settle':
      // stop() does not wait out the read-back's window; what the early read cannot decide goes again, counted.
      return { at: draining ? now : now + s.settleMs, firm: false };
    case 'auth':
      return { at: now + Math.max(s.authRetryMs, backoffDelay(s.ladder, attempt, input.draw)), firm: true };
    case 'start':
      return { at: Math.max(d.at, now + Math.floor(input.draw * s.startJitterMs)), firm: d.firm };
    case 'ends':
      return { at: !d.firm && d.at > now ? now : d.at, firm: d.firm };
    case 'ends, even firm':
      return { at: Math.min(d.at, now), firm: d.firm };
    case 'as before':
      return { at: d.at, firm: d.firm };
  }
}

function effectsOf(rule: Rule, d: Delivery, next: Delivery, event: EngineEvent, input: StepInput): Effects {
  const n = input.n;
  const readBack = d.state === 'unknown';
  const acknowledged = rule.step === 'acknowledge';
  const said = sayOf(rule, d, next, event, input);
  return {
    leave: acknowledged ? n : rule.step === 'set aside' ? 1 : 0,
    stored: !acknowledged ? 'no' : readBack ? 'found' : 'answered',
    suspect: rule.step === 'gone',
    ambiguous: rule.ambiguous ? n : 0,
    unresolved: rule.unresolved ? n : 0,
    retried: rule.retry,
    failing: rule.fails,
    paused: rule.step === 'pause',
    say: said.say,
    level: said.level,
  };
}

const QUIET: { say: string; level: LogLevel } = Object.freeze({ say: '', level: 'debug' });

/** What the log says of a step; `input.reason` is the service's or the network's message. */
function sayOf(rule: Rule, d: Delivery, next: Delivery, event: EngineEvent, input: StepInput): { say: string; level: LogLevel } {
  const n = input.n;
  const message = input.reason;
  const readBack = d.state === 'unknown';
  switch (rule.step) {
    case 'acknowledge':
      return readBack ? { say: 'the ' + n + ' samples whose outcome was unknown were stored; not sending them again', level: 'info' } : QUIET;
    case 'halve':
      return { say: 'the service found ' + n + ' samples too large; batches now hold at most ' + next.limit, level: 'warn' };
    case 'pause':
      // A redirect is said once, naming its Location; the tries every `authRetryMs` after it say nothing new.
      return { say: 'paused: ' + message, level: event === 'redirected' && d.why === event ? 'debug' : 'error' };
    case 'send again':
      return rule.unresolved
        ? { say: 'the ' + n + ' samples whose outcome was unknown may or may not have been stored (the read-back cannot tell); sending them again', level: 'warn' }
        : { say: 'the ' + n + ' samples whose outcome was unknown were not stored; sending them again', level: 'info' };
    case 'read back':
    case 'read again':
    case 'back off':
      if (readBack) {
        return { say: 'reading back ' + n + ' samples whose outcome was unknown failed, ' + (rule.step === 'read again' ? 'trying again: ' : 'sending them again: ') + (message === '' ? 'a fault of the host' : message), level: 'warn' };
      }
      if (message === '') return QUIET;
      return {
        say: message + (!rule.ambiguous ? '' : rule.step === 'read back'
          ? ' (outcome unknown: ' + n + ' samples are read back before they are sent again)'
          : ' (outcome unknown: ' + n + ' samples may arrive twice)'),
        level: 'warn',
      };
    default:
      return QUIET;
  }
}
