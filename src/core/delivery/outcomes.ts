// What came back from a request of the uplink, named: the outcomes RULES (rules.ts) knows. A batch's
// answer and a read-back's each have their own classification; neither looks at the head's state.
import type { FeedError } from '../wire/errors';
import type { Outcome } from './rules';

/** Reconciler verdicts (reconcile.ts). */
export const STORED = 0, NOT_STORED = 1, UNDECIDED = 2;

/**
 * A batch of `n`: `answered` (the service stored it), else its error (null: a fault of the host
 * adapter, no FeedError); `readable`: a read-back can decide what became of it; `mayBeGone`: the
 * resource of the element a 404 names may be gone (it is the agent's, and no lookup found it within the
 * last minute: vanished.ts), else the 404 refuses the element.
 */
export function classifyBatch(n: number, answered: boolean, e: FeedError | null, readable: boolean, mayBeGone: boolean): Outcome {
  if (answered) return 'acknowledged';
  if (e === null) return 'host fault';
  const status = e.kind === 'http' ? e.status : 0;
  if (status === 413) return n > 1 ? 'too large' : 'refused element';
  if (status === 400 || status === 404 || status === 422) {
    const i = e.elementIndex;
    if (i < 0 || i >= n) return 'refused unnamed';
    return status === 404 && mayBeGone ? 'gone' : 'refused element';
  }
  if (e.retryable) {
    if (!e.maybeDelivered) return e.retryAfterMs >= 0 ? 'throttled' : 'transient';
    if (!readable) return 'unknown unreadable';
    // After a timeout the service may still be at it; a reset or a garbled answer came once it had finished.
    return e.kind === 'timeout' ? 'unknown after timeout' : 'unknown after reset';
  }
  if (status === 401 || status === 403) return 'auth refused';
  // A redirect the client does not follow (another origin, 301/302/303): a configuration problem.
  if (status >= 300 && status < 400) return 'redirected';
  return 'refused request';
}

/**
 * A read-back: its verdict when the service answered, else its error (null: a fault of the host).
 * `settled`: the read went once the service had had time to finish; an early read never decides "not stored".
 */
export function classifyReadBack(answered: boolean, verdict: number, e: FeedError | null, settled: boolean): Outcome {
  if (answered) return verdict === STORED ? 'read stored' : verdict === NOT_STORED && settled ? 'read not stored' : 'read undecided';
  if (e === null) return 'host fault';
  // A read that never reached the service is tried again; one that reached it and failed gives up.
  if (!e.maybeDelivered && (e.kind === 'network' || e.kind === 'timeout')) return 'read unreached';
  return 'read failed';
}
