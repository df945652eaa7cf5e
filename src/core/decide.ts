// Every rule of delivery in one pure function: what the uplink sent, what came back and the state of the
// head of the queue give one decision. The uplink applies it (head.ts holds the state, uplink.ts the
// mechanism); docs/architecture.md's decision table is this function's test (test/core/decide.test.ts,
// on Node and on XS).
import { MAX_RETRY_AFTER_MS } from './backoff';
import type { FeedError } from './errors';
import { isAuthError } from './errors';

/** The states of the head of the queue (head.ts). */
export const IDLE = 0, SENDING = 1, UNKNOWN = 2, ISOLATING = 3, PAUSED = 4;

/** Verdicts of a read-back (reconcile.ts). */
export const STORED = 0, NOT_STORED = 1, UNDECIDED = 2;

/** The decisions. */
export const ACKNOWLEDGE = 0, SET_ASIDE = 1, HALVE = 2, BISECT = 3, BACK_OFF = 4, READ_BACK = 5, PAUSE = 6, GONE = 7, SEND_AGAIN = 8;

export interface Decision {
  kind: number;
  /** ACKNOWLEDGE, HALVE, BISECT: how many samples; SET_ASIDE, GONE: the element's index; PAUSE: 1 when the token was refused. */
  n: number;
  /** BACK_OFF, READ_BACK, PAUSE: no request before this time. */
  at: number;
  /** BACK_OFF: flush() and stop() wait for it too (the service said Retry-After). */
  firm: boolean;
  /** The samples go again without knowing whether they were stored: counted unresolved. */
  unresolved: boolean;
}

/** What came back: an answer (for a read-back, its verdict), or the error; neither is a fault of the host adapter. */
export interface Came {
  answered: boolean;
  verdict: number;
  error: FeedError | null;
}

/** The head as the rules see it: its state, and whether a batch of it whose outcome is unknown can be read back. */
export interface HeadView {
  state: number;
  readable: boolean;
}

/** The clock and the waits a decision may need; `backoffMs` is this attempt's jittered backoff (backoff.ts). */
export interface Timing {
  now: number;
  backoffMs: number;
  /** After a timeout, how long before a read-back can rule out that the service still stores the batch. */
  settleMs: number;
  authRetryMs: number;
}

function decision(kind: number, n: number, at = 0, firm = false, unresolved = false): Decision {
  return { kind, n, at, firm, unresolved };
}

/** Statuses whose answer blames elements of the body rather than the request as a whole. */
function blamesElements(e: FeedError): boolean {
  return e.kind === 'http' && (e.status === 400 || e.status === 404 || e.status === 422);
}

/** The wait after a transient failure: the backoff, never shorter than the service's Retry-After. */
function backOff(e: FeedError | null, t: Timing, unresolved: boolean): Decision {
  const after = e === null ? -1 : e.retryAfterMs;
  const wait = after >= 0 ? Math.max(t.backoffMs, Math.min(after, MAX_RETRY_AFTER_MS)) : t.backoffMs;
  return decision(BACK_OFF, 0, t.now + wait, after >= 0, unresolved);
}

/** `count`: the samples the request carried (a batch, or the batch read back). */
export function decide(count: number, came: Came, head: HeadView, t: Timing): Decision {
  const e = came.error;
  if (head.state === UNKNOWN) {
    if (came.answered) {
      if (came.verdict === STORED) return decision(ACKNOWLEDGE, count);
      return decision(SEND_AGAIN, 0, t.now, false, came.verdict === UNDECIDED);
    }
    // A read that never reached the service is tried again; one that reached it and failed gives up.
    if (e !== null && !e.maybeDelivered && (e.kind === 'network' || e.kind === 'timeout')) return decision(READ_BACK, count, t.now + t.backoffMs);
    return backOff(e, t, true);
  }
  if (came.answered) return decision(ACKNOWLEDGE, count);
  if (e === null) return backOff(null, t, false);
  if (e.kind === 'http' && e.status === 413) return count > 1 ? decision(HALVE, Math.floor(count / 2)) : decision(SET_ASIDE, 0);
  if (blamesElements(e)) {
    const i = e.elementIndex;
    if (i >= 0 && i < count) return decision(e.status === 404 ? GONE : SET_ASIDE, i);
    return count > 1 ? decision(BISECT, count) : decision(SET_ASIDE, 0);
  }
  if (e.retryable) {
    if (!e.maybeDelivered) return backOff(e, t, false);
    // After a timeout the service may still be at it; a reset or a garbled answer came once it had finished.
    if (head.readable) return decision(READ_BACK, count, e.kind === 'timeout' ? t.now + t.settleMs : t.now);
    return backOff(e, t, true);
  }
  // 401/403, or an answer that blames the request as a whole: try again rarely.
  return decision(PAUSE, isAuthError(e) ? 1 : 0, t.now + t.authRetryMs);
}
