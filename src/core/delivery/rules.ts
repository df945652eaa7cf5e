// The whole delivery engine as data. The head of the queue (head.ts) is in one of five states; every
// event that moves it is a row here: what came back from a request (an outcome, named by outcomes.ts)
// and the agent's own moves (the first flush after start, a batch resumed after a restart, a batch sent,
// a sample set aside unsent, flush() and stop() hurrying). RULES[state][event] gives the next state, the
// samples the head holds there, the step the uplink carries out, the wait before the next request,
// whether a request is failing, what is counted, and what becomes of the attempt count behind the
// backoff. The head applies a row and nothing else; docs/architecture.md's tables and diagram are
// generated from RULES (scripts/engine-tables.mjs) and a test fails when they are stale. A pair with no
// row cannot happen: `ruleFor` throws at once, as h11 raises on an event its state does not allow.

/**
 *   idle       nothing known; the next batch goes once a flush falls due, from `at` on
 *   sending    the first `count` samples are out in one request
 *   unknown    the first `count` samples went out and may be stored: they are read back from `at` on
 *   isolating  the service refused one of the first `count` samples: the one at `bad`, or one the
 *              halves find (bisection); prefixes go until it is pinned down and set aside
 *   paused     the service refused the request as a whole (a refused token, a redirect): nothing before `at`
 */
export type State = 'idle' | 'sending' | 'unknown' | 'isolating' | 'paused';

/** What came back, by name. `read …` are the verdicts and failures of a read-back (reconcile.ts). */
export type Outcome =
  | 'acknowledged'
  | 'refused element'
  | 'refused unnamed'
  | 'gone'
  | 'too large'
  | 'transient'
  | 'throttled'
  | 'host fault'
  | 'unknown after reset'
  | 'unknown after timeout'
  | 'unknown unreadable'
  | 'auth refused'
  | 'refused request'
  | 'redirected'
  | 'read stored'
  | 'read not stored'
  | 'read undecided'
  | 'read unreached'
  | 'read failed';

/**
 * The agent's own moves of the head: `begin` (the first flush after start), `resume` (a batch that was
 * out when the last run ended), `send` (a batch goes out), `drop first` (the first sample leaves unsent:
 * the refused one isolation pinned down, or a gone resource's), `hurry` (flush()), `drain` (stop()).
 */
export type Move = 'begin' | 'resume' | 'send' | 'drop first' | 'hurry' | 'drain';

/** Everything that moves the head. */
export type EngineEvent = Outcome | Move;

/** What the uplink carries out. */
export type Step =
  | 'acknowledge'
  | 'isolate'
  | 'gone'
  | 'halve'
  | 'read back'
  | 'read again'
  | 'back off'
  | 'send again'
  | 'pause'
  | 'send'
  | 'set aside'
  | 'none';

/**
 * The samples the head holds (locked) in its next state: `none`; the `batch` (the n sent, resumed or
 * read back); up to the `named` element (all n sent when the service named none); the `rest` of an
 * isolation after a prefix went through; the `same` as before.
 */
export type Holds = 'none' | 'batch' | 'named' | 'rest' | 'same';

/**
 * No request before: `now`; now + `backoff` (this attempt's jittered delay); now + `settle` (after a
 * timeout, until a read-back can rule the batch out; at once while stop() drains); now + `auth`
 * (`authRetryMs`, never less than the backoff; firm); now + the service's `retry-after`, never less than
 * the backoff (firm);
 * `start`: not before the start jitter; `as before`; `ends`: a wait that is not firm ends now; `ends,
 * even firm`. A firm wait is one flush() honours too.
 */
export type Wait = 'now' | 'backoff' | 'settle' | 'auth' | 'retry-after' | 'start' | 'as before' | 'ends' | 'ends, even firm';

export interface Rule {
  readonly to: State;
  readonly holds: Holds;
  readonly step: Step;
  readonly wait: Wait;
  /** Whether a request is failing from now on (nothing acknowledged since the last failure): `set`, `clear` or `keep`. */
  readonly retrying: 'set' | 'clear' | 'keep';
  /** The samples go again without anyone knowing whether they were stored: counted `unresolved`. */
  readonly unresolved: boolean;
  /** The request's outcome is unknown: its samples are counted `ambiguous`. */
  readonly ambiguous: boolean;
  /** A transient failure the agent retries: counted in `retries`. */
  readonly retry: boolean;
  /**
   * The attempt count behind the backoff: `reset` by success; `raise`d once per failed attempt at the
   * batch, a read-back being part of the attempt whose outcome it reads; `keep` otherwise.
   */
  readonly attempt: 'reset' | 'raise' | 'keep';
  /** flush() hears of a failure (resolves false); stop() rides it out. */
  readonly fails: boolean;
  /** stop() drains from now on: a read-back goes at once, and a pause or a refusal ends the drain. */
  readonly drains: boolean;
}

type Flags = Partial<Omit<Rule, 'to' | 'holds' | 'step' | 'wait'>>;

function rule(to: State, holds: Holds, step: Step, wait: Wait, flags: Flags = {}): Rule {
  return Object.freeze({ to, holds, step, wait, retrying: 'keep', unresolved: false, ambiguous: false, retry: false, attempt: 'keep', fails: false, drains: false, ...flags });
}

const FAILING: Flags = Object.freeze({ retrying: 'set', fails: true });
const PAUSING: Flags = Object.freeze({ ...FAILING, attempt: 'raise' });

/** The answers to a batch out; `isolating`: the batch is a prefix or half of an isolation, which goes on after a wait. */
function answers(isolating: boolean): Readonly<Partial<Record<EngineEvent, Rule>>> {
  const stay: State = isolating ? 'isolating' : 'idle';
  const kept: Holds = isolating ? 'same' : 'none';
  return {
    'acknowledged': rule(stay, isolating ? 'rest' : 'none', 'acknowledge', 'now', { retrying: 'clear', attempt: 'reset' }),
    'refused element': rule('isolating', 'named', 'isolate', 'now'),
    'refused unnamed': rule('isolating', 'named', 'isolate', 'now'),
    'gone': rule('idle', 'none', 'gone', 'now'),
    'too large': rule(stay, kept, 'halve', 'now', { retrying: 'set' }),
    'transient': rule(stay, kept, 'back off', 'backoff', { ...FAILING, retry: true, attempt: 'raise' }),
    'throttled': rule(stay, kept, 'back off', 'retry-after', { ...FAILING, retry: true, attempt: 'raise' }),
    'host fault': rule(stay, kept, 'back off', 'backoff', { ...FAILING, attempt: 'raise' }),
    'unknown after reset': rule('unknown', 'batch', 'read back', 'now', { ...FAILING, ambiguous: true, retry: true }),
    'unknown after timeout': rule('unknown', 'batch', 'read back', 'settle', { ...FAILING, ambiguous: true, retry: true }),
    'unknown unreadable': rule(stay, kept, 'back off', 'backoff', { ...FAILING, ambiguous: true, unresolved: true, retry: true, attempt: 'raise' }),
    'auth refused': rule('paused', 'none', 'pause', 'auth', PAUSING),
    'refused request': rule('paused', 'none', 'pause', 'auth', PAUSING),
    'redirected': rule('paused', 'none', 'pause', 'auth', PAUSING),
  };
}

/** flush() and stop() in any state: a wait that is not firm ends now; `evenFirm`: stop() while paused tries once at once. */
function hurried(state: State, evenFirm: boolean): Readonly<Partial<Record<EngineEvent, Rule>>> {
  return {
    'hurry': rule(state, 'same', 'none', 'ends'),
    'drain': rule(state, 'same', 'none', evenFirm ? 'ends, even firm' : 'ends', { drains: true }),
  };
}

/** RULES[state][event]: every pair that can happen. */
export const RULES: Readonly<Record<State, Readonly<Partial<Record<EngineEvent, Rule>>>>> = Object.freeze({
  idle: Object.freeze({
    'begin': rule('idle', 'same', 'none', 'start'),
    'resume': rule('sending', 'batch', 'none', 'now'),
    'send': rule('sending', 'batch', 'send', 'now'),
    // A gone resource's sample at the head.
    'drop first': rule('idle', 'none', 'set aside', 'as before'),
    ...hurried('idle', false),
  }),
  sending: Object.freeze({ ...answers(false), ...hurried('sending', false) }),
  isolating: Object.freeze({
    ...answers(true),
    // A prefix or half of the isolated range.
    'send': rule('isolating', 'same', 'send', 'now'),
    // The refused sample, pinned down.
    'drop first': rule('idle', 'none', 'set aside', 'as before'),
    ...hurried('isolating', false),
  }),
  unknown: Object.freeze({
    'read stored': rule('idle', 'none', 'acknowledge', 'now', { retrying: 'clear', attempt: 'reset' }),
    // The batch goes again after the backoff: in a partial outage (writes reset, reads answered) the cycle
    // of a send and its read-back would otherwise never wait.
    'read not stored': rule('idle', 'none', 'send again', 'backoff', { retrying: 'set', attempt: 'raise' }),
    'read undecided': rule('idle', 'none', 'send again', 'backoff', { retrying: 'set', unresolved: true, attempt: 'raise' }),
    'read unreached': rule('unknown', 'same', 'read again', 'backoff', { ...FAILING, retry: true, attempt: 'raise' }),
    'read failed': rule('idle', 'none', 'back off', 'backoff', { ...FAILING, unresolved: true, retry: true, attempt: 'raise' }),
    'host fault': rule('idle', 'none', 'back off', 'backoff', { ...FAILING, unresolved: true, attempt: 'raise' }),
    // A batch resumed after a restart is read back after the start jitter.
    'begin': rule('unknown', 'same', 'none', 'start'),
    ...hurried('unknown', false),
  }),
  paused: Object.freeze({
    'send': rule('sending', 'batch', 'send', 'now'),
    'drop first': rule('paused', 'none', 'set aside', 'as before'),
    ...hurried('paused', true),
  }),
});

/** The rule for `event` in `state`; a pair with none is a bug, and throws. */
export function ruleFor(state: State, event: EngineEvent): Rule {
  const r = RULES[state][event];
  if (r === undefined) throw new Error('delivery: no rule for "' + event + '" in state ' + state);
  return r;
}
