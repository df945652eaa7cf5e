// docs/architecture.md's tables of the delivery engine, drawn from RULES (src/core/rules.ts): which
// answer is which outcome, and what each outcome does in each state. scripts/engine-tables.mjs writes
// them into the document; test/core/rules.test.ts fails when the document is stale, and checks that
// each outcome's example answer is classified as that outcome (on XS too: the probe `rules`).
import type { State } from '../../src/core/head';
import { STORED, NOT_STORED, UNDECIDED, classifyBatch, classifyReadBack } from '../../src/core/outcomes';
import type { Outcome, Rule } from '../../src/core/rules';
import { RULES } from '../../src/core/rules';
import { FeedError } from '../../src/core/errors';

export const STATES: State[] = ['idle', 'sending', 'isolating', 'unknown', 'paused'];

const http = (status: number, detail: string, elementIndex = -1, retryAfterMs = -1): FeedError =>
  new FeedError('http', 'HTTP ' + status + ': ' + detail, { status, elementIndex, retryAfterMs });

/** Each outcome: what came back, in words, and one such answer as the engine classifies it. */
export const OUTCOMES: Record<Outcome, { words: string; example: () => Outcome }> = {
  'acknowledged': { words: '200, either form', example: () => classifyBatch(10, true, null, false) },
  'refused element': { words: '400 or 422 `element i: …`; 413 for a batch of one (element 0)', example: () => classifyBatch(10, false, http(422, 'element 3: value refused', 3), false) },
  'refused unnamed': { words: '400, 404 or 422 naming no element (or one outside the batch)', example: () => classifyBatch(10, false, http(400, 'bad request'), false) },
  'gone': { words: '404 `element i: resource N not found`', example: () => classifyBatch(10, false, http(404, 'element 3: resource 99 not found', 3), false) },
  'too large': { words: '413 for a batch of more than one', example: () => classifyBatch(10, false, http(413, 'too large'), false) },
  'transient': { words: '5xx, 408, 429 without `Retry-After`; a refused connection (nothing sent)', example: () => classifyBatch(10, false, http(503, 'unavailable'), false) },
  'throttled': { words: 'the same with `Retry-After`', example: () => classifyBatch(10, false, http(429, 'slow down', -1, 5_000), false) },
  'host fault': { words: 'the host adapter failed (no answer, no FeedError)', example: () => classifyBatch(10, false, null, false) },
  'unknown after reset': { words: 'a reset after the body went, a garbled or over-long 200; readable', example: () => classifyBatch(10, false, new FeedError('network', 'socket hang up', { maybeDelivered: true }), true) },
  'unknown after timeout': { words: 'a timeout after the body went; readable', example: () => classifyBatch(10, false, new FeedError('timeout', 'timeout', { maybeDelivered: true }), true) },
  'unknown unreadable': { words: 'any unknown outcome a read-back cannot decide', example: () => classifyBatch(10, false, new FeedError('timeout', 'timeout', { maybeDelivered: true }), false) },
  'auth refused': { words: '401, 403', example: () => classifyBatch(10, false, http(401, 'invalid token'), false) },
  'refused request': { words: 'another 4xx (405, 409, …)', example: () => classifyBatch(10, false, http(409, 'conflict'), false) },
  'redirected': { words: 'a redirect the client does not follow (another origin, 301, 302, 303)', example: () => classifyBatch(10, false, http(302, 'redirected to https://elsewhere.example/'), false) },
  'read stored': { words: 'the read-back shows the batch stored', example: () => classifyReadBack(true, STORED, null, false) },
  'read not stored': { words: 'it shows nothing new, read once the service had time to finish', example: () => classifyReadBack(true, NOT_STORED, null, true) },
  'read undecided': { words: 'anything else, or nothing new read early (flush(), stop())', example: () => classifyReadBack(true, NOT_STORED, null, false) },
  'read unreached': { words: 'the read did not reach the service (refused, unreachable)', example: () => classifyReadBack(false, UNDECIDED, new FeedError('network', 'ECONNREFUSED', { maybeDelivered: false }), true) },
  'read failed': { words: 'the read reached it and failed (503, reset, garbled, 401)', example: () => classifyReadBack(false, UNDECIDED, http(503, 'unavailable'), true) },
};

const WAITS: Record<Rule['wait'], string> = {
  'now': 'now',
  'backoff': 'backoff',
  'settle': 'settle',
  'auth': 'authRetryMs (firm)',
  'retry-after': 'Retry-After, at least the backoff (firm)',
};

function flags(r: Rule): string {
  const out: string[] = [];
  if (r.ambiguous) out.push('ambiguous');
  if (r.unresolved) out.push('unresolved');
  if (r.retry) out.push('retries');
  return out.length === 0 ? '' : out.join(', ');
}

/** The outcomes as the document lists them. */
export function outcomesTable(): string {
  const lines = ['| outcome | what came back |', '|---|---|'];
  for (const name of Object.keys(OUTCOMES) as Outcome[]) lines.push('| ' + name + ' | ' + OUTCOMES[name].words + ' |');
  return lines.join('\n');
}

/** RULES as the document writes it: one row per pair that can happen. */
export function rulesTable(): string {
  const lines = ['| state | outcome | step | next state | wait | counted | attempt | flush() fails |', '|---|---|---|---|---|---|---|---|'];
  for (const state of STATES) {
    const rules = RULES[state];
    for (const outcome of Object.keys(OUTCOMES) as Outcome[]) {
      const r = rules[outcome];
      if (r === undefined) continue;
      lines.push('| ' + [state, outcome, r.step, r.to, WAITS[r.wait], flags(r), r.attempt, r.fails ? 'yes' : ''].join(' | ') + ' |');
    }
  }
  return lines.join('\n');
}

/** Every pair that has no rule, by state: the impossible ones. */
export function impossibleList(): string {
  const lines: string[] = [];
  for (const state of STATES) {
    const missing = (Object.keys(OUTCOMES) as Outcome[]).filter((o) => RULES[state][o] === undefined);
    if (missing.length === Object.keys(OUTCOMES).length) lines.push('- ' + state + ': every outcome (nothing is out)');
    else if (missing.length > 0) lines.push('- ' + state + ': ' + missing.join(', '));
  }
  return lines.join('\n');
}

export const BEGIN = '<!-- engine tables: generated from src/core/rules.ts by scripts/engine-tables.mjs; do not edit -->';
export const END = '<!-- end of engine tables -->';

/** The generated part of docs/architecture.md, markers included. */
export function engineTables(): string {
  return [BEGIN, '', outcomesTable(), '', rulesTable(), '', 'Pairs without a rule throw at once (a bug, never a network event):', '', impossibleList(), '', END].join('\n');
}

/** `doc` with its generated part replaced by the current one. */
export function withEngineTables(doc: string): string {
  const a = doc.indexOf(BEGIN);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) throw new Error('docs/architecture.md has no engine tables markers');
  return doc.slice(0, a) + engineTables() + doc.slice(b + END.length);
}
