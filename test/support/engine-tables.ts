// docs/architecture.md's tables and diagram of the delivery engine, drawn from RULES (src/core/delivery/rules.ts):
// the states, which answer is which outcome, the agent's own moves, what each event does in each state,
// and the moves between states as a diagram. scripts/engine-tables.mjs writes them into the document;
// test/core/rules.test.ts fails when the document is stale, and checks that each outcome's example answer
// is classified as that outcome (on XS too: the probe `rules`).
import { STORED, NOT_STORED, UNDECIDED, classifyBatch, classifyReadBack } from '../../src/core/delivery/outcomes';
import type { EngineEvent, Move, Outcome, Rule, State } from '../../src/core/delivery/rules';
import { RULES } from '../../src/core/delivery/rules';
import { FeedError } from '../../src/core/wire/errors';

/** Each state: what the head holds (locked) there, and what the next request is. */
export const STATES: Record<State, { held: string; next: string }> = {
  idle: { held: 'nothing', next: 'a batch of up to `batch` samples, when a flush falls due and not before `at` (a backoff)' },
  sending: { held: 'the batch out', next: 'none: its answer is awaited' },
  isolating: { held: 'the first `count` samples, one of which the service refuses', next: 'the prefix before the refused element, or the left half, as soon as `at` allows; the element itself is set aside without a request once it is pinned down' },
  unknown: { held: 'the batch that went out, whose outcome is unknown', next: 'its read-back, at `at`' },
  paused: { held: 'nothing', next: 'a batch at `at` (the service refused the request as a whole)' },
};

const STATE_NAMES = Object.keys(STATES) as State[];

const http = (status: number, detail: string, elementIndex = -1, retryAfterMs = -1): FeedError =>
  new FeedError('http', 'HTTP ' + status + ': ' + detail, { status, elementIndex, retryAfterMs });

/** Each outcome: what came back, in words, and one such answer as the engine classifies it. */
export const OUTCOMES: Record<Outcome, { words: string; example: () => Outcome }> = {
  'acknowledged': { words: '200, either form', example: () => classifyBatch(10, true, null, false, false) },
  'refused element': { words: '400 or 422 `element i: …`; 413 for a batch of one (element 0); a 404 naming element i whose resource a lookup found in the last minute, or that is not the agent\'s', example: () => classifyBatch(10, false, http(422, 'element 3: value refused', 3), false, false) },
  'refused unnamed': { words: '400, 404 or 422 naming no element (or one outside the batch)', example: () => classifyBatch(10, false, http(400, 'bad request'), false, false) },
  'gone': { words: '404 `element i: resource N not found`, of a resource of the agent\'s that no lookup found in the last minute', example: () => classifyBatch(10, false, http(404, 'element 3: resource 99 not found', 3), false, true) },
  'too large': { words: '413 for a batch of more than one', example: () => classifyBatch(10, false, http(413, 'too large'), false, false) },
  'transient': { words: '5xx, 408, 429 without `Retry-After`, whatever the length of its body; a refused connection (nothing sent)', example: () => classifyBatch(10, false, http(503, 'unavailable'), false, false) },
  'throttled': { words: 'the same with `Retry-After`', example: () => classifyBatch(10, false, http(429, 'slow down', -1, 5_000), false, false) },
  'host fault': { words: 'the host adapter failed (no answer, no FeedError)', example: () => classifyBatch(10, false, null, false, false) },
  'unknown after reset': { words: 'a reset after the body went, a garbled or over-long 200; readable', example: () => classifyBatch(10, false, new FeedError('network', 'socket hang up', { maybeDelivered: true }), true, false) },
  'unknown after timeout': { words: 'a timeout after the body went; readable', example: () => classifyBatch(10, false, new FeedError('timeout', 'timeout', { maybeDelivered: true }), true, false) },
  'unknown unreadable': { words: 'any unknown outcome a read-back cannot decide', example: () => classifyBatch(10, false, new FeedError('timeout', 'timeout', { maybeDelivered: true }), false, false) },
  'auth refused': { words: '401, 403', example: () => classifyBatch(10, false, http(401, 'invalid token'), false, false) },
  'refused request': { words: 'another 4xx (405, 409, …)', example: () => classifyBatch(10, false, http(409, 'conflict'), false, false) },
  'redirected': { words: 'a redirect the client does not follow (another origin, 301, 302, 303)', example: () => classifyBatch(10, false, http(302, 'redirected to https://elsewhere.example/'), false, false) },
  'read stored': { words: 'the read-back shows the batch stored', example: () => classifyReadBack(true, STORED, null, false) },
  'read not stored': { words: 'it shows nothing new, read once the service had time to finish', example: () => classifyReadBack(true, NOT_STORED, null, true) },
  'read undecided': { words: 'anything else, or nothing new read early (flush(), stop())', example: () => classifyReadBack(true, NOT_STORED, null, false) },
  'read unreached': { words: 'the read did not reach the service (refused, unreachable)', example: () => classifyReadBack(false, UNDECIDED, new FeedError('network', 'ECONNREFUSED', { maybeDelivered: false }), true) },
  'read failed': { words: 'the read reached it and failed (503, reset, garbled, 401)', example: () => classifyReadBack(false, UNDECIDED, http(503, 'unavailable'), true) },
};

/** The agent's own moves, in words. */
export const MOVES: Record<Move, string> = {
  'begin': 'start(): the first flush after start, spread over `startJitterMs`',
  'resume': 'start(): durable storage kept a batch that was out in a request when the last run ended',
  'send': 'a flush is due and `at` has passed: the next batch goes out (isolating: the prefix or half)',
  'drop first': 'the first sample leaves without a request: the refused one isolation pinned down, or a gone resource\'s',
  'hurry': 'flush()',
  'drain': 'stop(), delivering what is queued',
};

/** Every event: the answers, then the agent's own moves. */
export const EVENTS: EngineEvent[] = [...(Object.keys(OUTCOMES) as Outcome[]), ...(Object.keys(MOVES) as Move[])];

const WAITS: Record<Rule['wait'], string> = {
  'now': 'now',
  'backoff': 'backoff',
  'settle': 'settle (none while draining)',
  'auth': 'authRetryMs (firm)',
  'retry-after': 'Retry-After, at least the backoff (firm)',
  'start': 'start jitter',
  'as before': 'as before',
  'ends': 'ends now, unless firm',
  'ends, even firm': 'ends now',
};

function flags(r: Rule): string {
  const out: string[] = [];
  if (r.ambiguous) out.push('ambiguous');
  if (r.unresolved) out.push('unresolved');
  if (r.retry) out.push('retries');
  return out.join(', ');
}

/** The states as the document lists them. */
export function statesTable(): string {
  const lines = ['| state | held (locked) | the next request |', '|---|---|---|'];
  for (const state of STATE_NAMES) lines.push('| ' + state + ' | ' + STATES[state].held + ' | ' + STATES[state].next + ' |');
  return lines.join('\n');
}

/** The outcomes as the document lists them. */
export function outcomesTable(): string {
  const lines = ['| outcome | what came back |', '|---|---|'];
  for (const name of Object.keys(OUTCOMES) as Outcome[]) lines.push('| ' + name + ' | ' + OUTCOMES[name].words + ' |');
  return lines.join('\n');
}

/** The agent's own moves as the document lists them. */
export function movesTable(): string {
  const lines = ['| move | when |', '|---|---|'];
  for (const name of Object.keys(MOVES) as Move[]) lines.push('| ' + name + ' | ' + MOVES[name] + ' |');
  return lines.join('\n');
}

/** RULES as the document writes it: one row per pair that can happen. */
export function rulesTable(): string {
  const lines = [
    '| state | event | step | next state | holds | wait | retrying | counted | attempt | flush() fails | stop() drains |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const state of STATE_NAMES) {
    for (const event of EVENTS) {
      const r = RULES[state][event];
      if (r === undefined) continue;
      lines.push('| ' + [state, event, r.step, r.to, r.holds, WAITS[r.wait], r.retrying, flags(r), r.attempt, r.fails ? 'yes' : '', r.drains ? 'from now' : ''].join(' | ') + ' |');
    }
  }
  return lines.join('\n');
}

/** Every pair that has no rule, by state: the impossible ones. */
export function impossibleList(): string {
  const lines: string[] = [];
  for (const state of STATE_NAMES) {
    const missing = EVENTS.filter((e) => RULES[state][e] === undefined);
    if (missing.length > 0) lines.push('- ' + state + ': ' + missing.join(', '));
  }
  return lines.join('\n');
}

/** The moves between states, as a Mermaid state diagram: one arrow per pair of states, labelled with every event that makes it. */
export function diagram(): string {
  const lines = ['```mermaid', 'stateDiagram-v2', '  [*] --> idle'];
  for (const from of STATE_NAMES) {
    for (const to of STATE_NAMES) {
      const events = EVENTS.filter((e) => RULES[from][e]?.to === to);
      if (events.length > 0) lines.push('  ' + from + ' --> ' + to + ': ' + events.join(', '));
    }
  }
  lines.push('```');
  return lines.join('\n');
}

export const BEGIN = '<!-- engine tables: generated from src/core/delivery/rules.ts by scripts/engine-tables.mjs; do not edit -->';
export const END = '<!-- end of engine tables -->';

/** The generated part of docs/architecture.md, markers included. */
export function engineTables(): string {
  return [
    BEGIN, '',
    statesTable(), '',
    'Every move between states, from RULES:', '',
    diagram(), '',
    'What came back, by outcome:', '',
    outcomesTable(), '',
    'The agent\'s own moves:', '',
    movesTable(), '',
    'Every rule, by state and event:', '',
    rulesTable(), '',
    'Pairs without a rule throw at once (a bug, never a network event):', '',
    impossibleList(), '',
    END,
  ].join('\n');
}

/** `doc` with its generated part replaced by the current one. */
export function withEngineTables(doc: string): string {
  const a = doc.indexOf(BEGIN);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) throw new Error('docs/architecture.md has no engine tables markers');
  return doc.slice(0, a) + engineTables() + doc.slice(b + END.length);
}
