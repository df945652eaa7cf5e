// docs/architecture.md's decision table, row by row, and how each row's words become decide()'s inputs
// and its decision becomes words. test/core/decide.test.ts checks that the document holds exactly these
// rows and that decide() gives each row's decision; the XS probe `decisions` runs them on XS.
import type { Came, Decision, HeadView, Timing } from '../../src/core/decide';
import {
  ACKNOWLEDGE, BACK_OFF, BISECT, GONE, HALVE, IDLE, ISOLATING, PAUSE, PAUSED, READ_BACK, SEND_AGAIN, SENDING, SET_ASIDE,
  NOT_STORED, STORED, UNDECIDED, UNKNOWN, decide,
} from '../../src/core/decide';
import { FeedError } from '../../src/core/errors';

/** [head state, what was sent, what came back, decision]: the table's columns. */
export type Row = [string, string, string, string];

/** The times of the table's rows: `now`, this attempt's `backoff`, the `settle` wait after a timeout, `authRetryMs`. */
const TIMING: Timing = { now: 1_000, backoffMs: 400, settleMs: 2_500, authRetryMs: 300_000 };
/** `n` in the rows. */
const N = 10;

const http = (status: number, detail: string, elementIndex = -1, retryAfterMs = -1): FeedError =>
  new FeedError('http', 'HTTP ' + status + ': ' + detail, { status, elementIndex, retryAfterMs });
const failed = (error: FeedError | null): Came => ({ answered: false, verdict: -1, error });
const verdict = (v: number): Came => ({ answered: true, verdict: v, error: null });

/** What came back, by the words of the table; `(readable)`: the batch's outcome can be read back. */
const CAME: Record<string, [Came, boolean]> = {
  '200 (either form)': [{ answered: true, verdict: -1, error: null }, false],
  '413': [failed(http(413, 'too large')), false],
  '400 or 422 `element i: …`': [failed(http(422, 'element 3: value 500 refused', 3)), false],
  '404 `element i: resource N not found`': [failed(http(404, 'element 3: resource 99 not found', 3)), false],
  '400, 404 or 422 naming no element': [failed(http(422, 'value refused')), false],
  '503, 500, 408, 429 without `Retry-After`': [failed(http(503, 'unavailable')), false],
  'refused connection (nothing sent)': [failed(new FeedError('network', 'ECONNREFUSED', { maybeDelivered: false })), false],
  '429 with `Retry-After: 5`': [failed(http(429, 'slow down', -1, 5_000)), false],
  'reset after the body went (readable)': [failed(new FeedError('network', 'socket hang up', { maybeDelivered: true })), true],
  'garbled 200 (readable)': [failed(new FeedError('protocol', 'malformed answer', { status: 200, maybeDelivered: true })), true],
  'timeout after the body went (readable)': [failed(new FeedError('timeout', 'timeout', { maybeDelivered: true })), true],
  'any unknown outcome (not readable)': [failed(new FeedError('timeout', 'timeout', { maybeDelivered: true })), false],
  '401 or 403': [failed(http(401, 'invalid token')), false],
  'another 4xx (405, 409, …)': [failed(http(409, 'conflict')), false],
  'a fault of the host adapter': [failed(null), false],
  'stored': [verdict(STORED), true],
  'not stored': [verdict(NOT_STORED), true],
  'undecided': [verdict(UNDECIDED), true],
  'the read did not reach the service': [failed(new FeedError('network', 'ECONNREFUSED', { maybeDelivered: false })), true],
  'the read failed (503, reset, garbled, 401)': [failed(http(503, 'unavailable')), true],
};

const STATES: Record<string, number> = { idle: IDLE, sending: SENDING, 'outcome unknown': UNKNOWN, isolating: ISOLATING, paused: PAUSED };
const SENT: Record<string, number> = { 'batch of n': N, 'batch of 1': 1, 'prefix or half of n': N, 'read-back of n': N };

export const ROWS: Row[] = [
  ['sending', 'batch of n', '200 (either form)', 'acknowledge n'],
  ['sending', 'batch of n', '413', 'halve: batches of n/2'],
  ['sending', 'batch of 1', '413', 'set element 0 aside'],
  ['sending', 'batch of n', '400 or 422 `element i: …`', 'set element i aside'],
  ['sending', 'batch of n', '404 `element i: resource N not found`', 'mark resource gone, set element i aside'],
  ['sending', 'batch of n', '400, 404 or 422 naming no element', 'bisect n'],
  ['sending', 'batch of 1', '400, 404 or 422 naming no element', 'set element 0 aside'],
  ['sending', 'batch of n', '503, 500, 408, 429 without `Retry-After`', 'back off until now + backoff'],
  ['sending', 'batch of n', 'refused connection (nothing sent)', 'back off until now + backoff'],
  ['sending', 'batch of n', '429 with `Retry-After: 5`', 'back off until now + 5 s (firm)'],
  ['sending', 'batch of n', 'reset after the body went (readable)', 'read back at now'],
  ['sending', 'batch of n', 'garbled 200 (readable)', 'read back at now'],
  ['sending', 'batch of n', 'timeout after the body went (readable)', 'read back at now + settle'],
  ['sending', 'batch of n', 'any unknown outcome (not readable)', 'back off until now + backoff, unresolved'],
  ['sending', 'batch of n', '401 or 403', 'pause until now + authRetryMs (token refused)'],
  ['sending', 'batch of n', 'another 4xx (405, 409, …)', 'pause until now + authRetryMs'],
  ['sending', 'batch of n', 'a fault of the host adapter', 'back off until now + backoff'],
  ['isolating', 'prefix or half of n', '200 (either form)', 'acknowledge n'],
  ['isolating', 'prefix or half of n', '400, 404 or 422 naming no element', 'bisect n'],
  ['isolating', 'prefix or half of n', '400 or 422 `element i: …`', 'set element i aside'],
  ['outcome unknown', 'read-back of n', 'stored', 'acknowledge n'],
  ['outcome unknown', 'read-back of n', 'not stored', 'send again now'],
  ['outcome unknown', 'read-back of n', 'undecided', 'send again now, unresolved'],
  ['outcome unknown', 'read-back of n', 'the read did not reach the service', 'read back at now + backoff'],
  ['outcome unknown', 'read-back of n', 'the read failed (503, reset, garbled, 401)', 'back off until now + backoff, unresolved'],
];

/** decide() on a row's inputs. */
export function decideRow(row: Row): Decision {
  const [came, readable] = CAME[row[2]];
  const head: HeadView = { state: STATES[row[0]], readable };
  return decide(SENT[row[1]], came, head, TIMING);
}

/** A decision in the table's words. */
export function describeDecision(d: Decision, sent: number): string {
  const n = (k: number): string => (k === N ? 'n' : k === N / 2 ? 'n/2' : String(k));
  const at = (t: number): string => {
    const wait = t - TIMING.now;
    if (wait === 0) return 'now';
    if (wait === TIMING.backoffMs) return 'now + backoff';
    if (wait === TIMING.settleMs) return 'now + settle';
    if (wait === TIMING.authRetryMs) return 'now + authRetryMs';
    return 'now + ' + wait / 1000 + ' s';
  };
  const unresolved = d.unresolved ? ', unresolved' : '';
  switch (d.kind) {
    case ACKNOWLEDGE: return 'acknowledge ' + n(d.n === sent ? N : d.n);
    case SET_ASIDE: return 'set element ' + (d.n === 3 ? 'i' : String(d.n)) + ' aside';
    case GONE: return 'mark resource gone, set element ' + (d.n === 3 ? 'i' : String(d.n)) + ' aside';
    case HALVE: return 'halve: batches of ' + n(d.n);
    case BISECT: return 'bisect ' + n(d.n);
    case BACK_OFF: return 'back off until ' + at(d.at) + (d.firm ? ' (firm)' : '') + unresolved;
    case READ_BACK: return 'read back at ' + at(d.at);
    case PAUSE: return 'pause until ' + at(d.at) + (d.n === 1 ? ' (token refused)' : '');
    case SEND_AGAIN: return 'send again ' + at(d.at) + unresolved;
    default: return 'unknown decision ' + d.kind;
  }
}

/** The table as docs/architecture.md writes it. */
export function markdownTable(): string {
  const lines = ['| head state | sent | what came back | decision |', '|---|---|---|---|'];
  for (const row of ROWS) lines.push('| ' + row.join(' | ') + ' |');
  return lines.join('\n');
}

/** Every row's decision in words, as decide() gives it on this engine. */
export function decisions(): string[] {
  return ROWS.map((row) => describeDecision(decideRow(row), SENT[row[1]]));
}
