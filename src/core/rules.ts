// Every rule of delivery as data: what came back (an outcome) in the head's state gives the next state,
// the step the uplink carries out, the wait before the next request, and what is counted. The head
// (head.ts) applies a rule; docs/architecture.md's tables are generated from RULES
// (scripts/engine-tables.mjs) and a test fails when they are stale. A pair with no rule cannot happen:
// `ruleFor` throws at once, as h11 raises on an event its state does not allow.
import type { State } from './head';

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
  | 'pause';

/**
 * No request before: `now`; now + `backoff` (this attempt's jittered delay); now + `settle` (after a
 * timeout, until a read-back can rule the batch out); now + `auth` (`authRetryMs`); now + the service's
 * `retry-after`, never less than the backoff (firm: flush() and stop() honour it too).
 */
export type Wait = 'now' | 'backoff' | 'settle' | 'auth' | 'retry-after';

export interface Rule {
  readonly to: State;
  readonly step: Step;
  readonly wait: Wait;
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
}

function rule(to: State, step: Step, wait: Wait, flags: Partial<Omit<Rule, 'to' | 'step' | 'wait'>> = {}): Rule {
  return Object.freeze({ to, step, wait, unresolved: false, ambiguous: false, retry: false, attempt: 'keep', fails: false, ...flags });
}

/** The rules of a batch's answer; `stay`: where the head goes when the batch goes again (an isolation goes on). */
function batchRules(stay: State): Readonly<Partial<Record<Outcome, Rule>>> {
  return Object.freeze({
    'acknowledged': rule(stay, 'acknowledge', 'now', { attempt: 'reset' }),
    'refused element': rule('isolating', 'isolate', 'now'),
    'refused unnamed': rule('isolating', 'isolate', 'now'),
    'gone': rule('idle', 'gone', 'now'),
    'too large': rule(stay, 'halve', 'now'),
    'transient': rule(stay, 'back off', 'backoff', { retry: true, attempt: 'raise', fails: true }),
    'throttled': rule(stay, 'back off', 'retry-after', { retry: true, attempt: 'raise', fails: true }),
    'host fault': rule(stay, 'back off', 'backoff', { attempt: 'raise', fails: true }),
    'unknown after reset': rule('unknown', 'read back', 'now', { ambiguous: true, retry: true, fails: true }),
    'unknown after timeout': rule('unknown', 'read back', 'settle', { ambiguous: true, retry: true, fails: true }),
    'unknown unreadable': rule(stay, 'back off', 'backoff', { ambiguous: true, unresolved: true, retry: true, attempt: 'raise', fails: true }),
    'auth refused': rule('paused', 'pause', 'auth', { fails: true }),
    'refused request': rule('paused', 'pause', 'auth', { fails: true }),
    'redirected': rule('paused', 'pause', 'auth', { fails: true }),
  });
}

/** RULES[state][outcome]: every pair that can happen. Idle and paused send nothing, so nothing comes back there. */
export const RULES: Readonly<Record<State, Readonly<Partial<Record<Outcome, Rule>>>>> = Object.freeze({
  idle: Object.freeze({}),
  sending: batchRules('idle'),
  isolating: batchRules('isolating'),
  unknown: Object.freeze({
    'read stored': rule('idle', 'acknowledge', 'now', { attempt: 'reset' }),
    'read not stored': rule('idle', 'send again', 'now'),
    'read undecided': rule('idle', 'send again', 'now', { unresolved: true }),
    'read unreached': rule('unknown', 'read again', 'backoff', { retry: true, attempt: 'raise', fails: true }),
    'read failed': rule('idle', 'back off', 'backoff', { unresolved: true, retry: true, attempt: 'raise', fails: true }),
    'host fault': rule('idle', 'back off', 'backoff', { unresolved: true, attempt: 'raise', fails: true }),
  }),
  paused: Object.freeze({}),
});

/** The rule for `outcome` in `state`; a pair with none is a bug, and throws. */
export function ruleFor(state: State, outcome: Outcome): Rule {
  const r = RULES[state][outcome];
  if (r === undefined) throw new Error('delivery: no rule for "' + outcome + '" in state ' + state);
  return r;
}
