// Every (state × event) pair of RULES, the answers and the agent's own moves, through a real head over a
// real queue, with the engine's invariants checked after each: the head goes where its row says and holds
// what its row says, locked; `retrying` and `draining` follow their columns; an early read-back never
// decides "not stored"; samples that go again without knowledge are counted unresolved; `at` never goes
// below a firm wait, nor does flush() move one; a locked sample is never evicted. A pair without a row
// throws and leaves the head as it was. Plain ES2020: test/core/rules.test.ts runs it on Node, the XS
// probe `rules` on XS.
import { Head } from '../../src/core/delivery/head';
import type { Answer } from '../../src/core/delivery/head';
import { SampleQueue } from '../../src/core/queue/queue';
import { UPLINK_DEFAULTS } from '../../src/core/config';
import type { EngineEvent, Move, Outcome, Rule, State } from '../../src/core/delivery/rules';
import { RULES } from '../../src/core/delivery/rules';
import { EVENTS, OUTCOMES, STATES } from './engine-tables';

const clock = { now: (): number => 0 };
const NOW = 100_000;
const SETTLE = 2_500;
const SETTINGS = { ...UPLINK_DEFAULTS, batch: 10, reconcileAfterMs: SETTLE };

function answerOf(outcome: Outcome): Answer {
  return { element: outcome === 'refused element' || outcome === 'gone' ? 2 : -1, retryAfterMs: outcome === 'throttled' ? 5_000 : -1, reason: outcome };
}

function isOutcome(event: EngineEvent): event is Outcome {
  return event in OUTCOMES;
}

/** A queue of 20 samples and a head brought to `state` by real moves; `pinned`: isolating, down to the first sample. */
function headIn(state: State, pinned: boolean, draining: boolean): { queue: SampleQueue; head: Head } {
  const queue = new SampleQueue({ capacity: 24, overflow: 'drop-oldest', stringBytes: 0, withSeq: false, clock });
  for (let i = 0; i < 20; i++) queue.push(1, i, i, i, 0);
  const head = new Head({ queue, settings: SETTINGS });
  if (state !== 'idle') head.send(10, NOW);
  if (state === 'isolating' && pinned) head.answer('refused element', { element: 0, retryAfterMs: -1, reason: 'refused' }, NOW, 0.5);
  if (state === 'isolating' && !pinned) {
    head.answer('refused unnamed', answerOf('refused unnamed'), NOW, 0.5);
    head.send(head.nextCount(), NOW);
  }
  if (state === 'unknown') head.answer('unknown after timeout', answerOf('unknown after timeout'), NOW, 0.5);
  if (state === 'paused') head.answer('auth refused', answerOf('auth refused'), NOW, 0.5);
  if (draining) head.drain(NOW);
  return { queue, head };
}

/** The agent's own move `move` on `head` at `now`. */
function make(head: Head, move: Move, now: number): void {
  if (move === 'begin') head.begin(now, 0.5);
  else if (move === 'resume') head.resume(10, now);
  else if (move === 'send') head.send(head.state === 'isolating' ? head.nextCount() : 10, now);
  else if (move === 'drop first') head.dropFirst(now);
  else if (move === 'hurry') head.hurry(now);
  else head.drain(now);
}

/** What the head knows, to compare before and after. */
function snapshot(head: Head, queue: SampleQueue): string {
  return JSON.stringify([head.delivery, queue.length, queue.inFlight]);
}

/** The samples `rule.holds` says the head holds after the event, given what it held and carried before. */
function expectedCount(rule: Rule, event: EngineEvent, before: number, out: number, n: number): number {
  switch (rule.holds) {
    case 'none': return 0;
    case 'batch': return event === 'resume' || event === 'send' ? n : out;
    case 'named': return event === 'refused unnamed' ? out : answerOf('refused element').element + 1;
    case 'rest': return before - out;
    default: return before;
  }
}

/** One line per pair and case: what happened, or why it cannot happen; and every invariant broken. */
export function walkRules(): { cells: string[]; broken: string[] } {
  const cells: string[] = [];
  const broken: string[] = [];
  for (const state of Object.keys(STATES) as State[]) {
    for (const event of EVENTS) {
      const rule = RULES[state][event];
      // An unknown batch is read back early (flush(), stop()) or once settled; everything else once.
      const times = state === 'unknown' ? [NOW + 1, NOW + SETTLE] : [NOW];
      for (const now of times) {
        for (const draining of [false, true]) {
          const what = state + ' / ' + event + ' at +' + (now - NOW) + (draining ? ' draining' : '');
          const { queue, head } = headIn(state, event === 'drop first', draining);
          const before = snapshot(head, queue);
          const { count, out, at, firm, retrying } = head.delivery;
          const length = queue.length;
          const early = state === 'unknown' && !head.settled(now);
          const n = event === 'send' && state === 'isolating' ? head.nextCount() : 10;
          try {
            if (isOutcome(event)) head.answer(event, answerOf(event), now, 0.5);
            else make(head, event, now);
          } catch (e) {
            if (snapshot(head, queue) !== before) broken.push(what + ': threw, and changed the head on the way');
            // The refusals the head makes: a pair without a row, an early read deciding "not stored".
            if (rule !== undefined && !(early && event === 'read not stored')) broken.push(what + ': threw ' + String(e));
            cells.push(what + ': ' + (rule === undefined ? 'impossible' : 'refused'));
            continue;
          }
          if (rule === undefined) {
            broken.push(what + ': no rule, yet the head took it');
            continue;
          }
          if (early && event === 'read not stored') broken.push(what + ': an early read-back decided "not stored"');
          cells.push(what + ': ' + rule.step + ' → ' + head.state + ' count ' + head.count + ' at +' + (head.at - now) + (head.firm ? ' firm' : '') + ' attempt ' + head.delivery.attempt);
          if (head.state !== rule.to) broken.push(what + ': went to ' + head.state + ', the rule says ' + rule.to);
          const held = expectedCount(rule, event, count, out, n);
          if (head.count !== held) broken.push(what + ': holds ' + head.count + ', the rule says ' + rule.holds + ' (' + held + ')');
          if (queue.inFlight !== head.count) broken.push(what + ': ' + queue.inFlight + ' locked, the head reasons about ' + head.count);
          const left = rule.step === 'acknowledge' ? out : rule.step === 'set aside' ? 1 : 0;
          if (queue.length !== length - left) broken.push(what + ': ' + (length - queue.length) + ' samples left the queue, the step says ' + left);
          if (head.retrying !== (rule.retrying === 'keep' ? retrying : rule.retrying === 'set')) broken.push(what + ': retrying is ' + head.retrying + ', the rule says ' + rule.retrying);
          if (rule.drains && !head.draining) broken.push(what + ': not draining after ' + event);
          if (rule.wait === 'as before' && (head.at !== at || head.firm !== firm)) broken.push(what + ': the wait moved');
          if (rule.wait === 'ends' && !firm && head.at > now) broken.push(what + ': a wait that is not firm did not end');
          if ((rule.wait === 'ends' || rule.wait === 'start') && firm && (head.at < at || !head.firm)) broken.push(what + ': a firm wait was cut');
          // Samples that go again without a verdict: from an unknown outcome, unless a settled read said "not stored".
          const again = rule.step === 'send again' || rule.step === 'back off';
          const blind = (state === 'unknown' && event !== 'read not stored') || rule.ambiguous;
          if (again && blind && !rule.unresolved) broken.push(what + ': goes again without knowledge, not counted unresolved');
          if (event === 'read undecided' && !rule.unresolved) broken.push(what + ': undecided, not counted unresolved');
          if (event === 'throttled' && head.at < now + 5_000) broken.push(what + ': at is before the Retry-After');
          if (rule.step === 'read back' && head.draining && head.at > now) broken.push(what + ': draining, yet the read-back waits');
          if (head.firm && head.state !== 'sending') {
            const firmAt = head.at;
            head.hurry(now);
            if (head.at !== firmAt) broken.push(what + ': flush() moved a firm wait');
          }
          // Overflow: evictions take only unlocked samples, so what the head holds keeps its place.
          const kept: number[] = [];
          for (let i = 0; i < head.count; i++) kept.push(queue.valueAt(i) as number);
          for (let i = 0; i < 40; i++) queue.push(2, 1000 + i, i, i, 0);
          for (let i = 0; i < kept.length; i++) if (queue.valueAt(i) !== kept[i]) broken.push(what + ': locked sample ' + i + ' was evicted or moved');
        }
      }
    }
  }
  return { cells, broken };
}
