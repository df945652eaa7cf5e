// Every (state × outcome) pair of RULES through a real head over a real queue, with the engine's
// invariants checked after each: an early read-back never decides "not stored"; a locked sample is
// never evicted; samples that go again without knowledge are counted unresolved; `at` never goes below
// a firm wait. Plain ES2020: test/core/rules.test.ts runs it on Node, the XS probe `rules` on XS.
import { Head } from '../../src/core/head';
import type { Answer, State, Timing } from '../../src/core/head';
import { SampleQueue } from '../../src/core/queue';
import type { Outcome } from '../../src/core/rules';
import { RULES, ruleFor } from '../../src/core/rules';
import { OUTCOMES, STATES } from './engine-tables';

const clock = { now: (): number => 0 };
const NOW = 100_000;
const SETTLE = 2_500;

function timing(now: number, draining: boolean): Timing {
  return { now, draw: 0.5, backoff: { baseMs: 1_000, capMs: 120_000 }, settleMs: SETTLE, authRetryMs: 300_000, draining };
}

function answer(outcome: Outcome, n: number): Answer {
  return { outcome, n, element: outcome === 'refused element' || outcome === 'gone' ? 2 : -1, retryAfterMs: outcome === 'throttled' ? 5_000 : -1, reason: outcome };
}

/** A queue of 20 samples and a head brought to `state` by real transitions. */
function headIn(state: State, draining: boolean): { queue: SampleQueue; head: Head; n: number } {
  const queue = new SampleQueue({ capacity: 24, overflow: 'drop-oldest', stringBytes: 0, withSeq: false, clock });
  for (let i = 0; i < 20; i++) queue.push(1, i, i, i);
  const head = new Head(queue, 10, null);
  let n = 0;
  if (state === 'sending' || state === 'isolating' || state === 'unknown') {
    head.send(10);
    n = 10;
  }
  if (state === 'isolating') {
    head.apply(ruleFor('sending', 'refused unnamed'), answer('refused unnamed', 10), timing(NOW, draining));
    n = head.nextCount();
    head.send(n);
  }
  if (state === 'unknown') head.apply(ruleFor('sending', 'unknown after timeout'), answer('unknown after timeout', 10), timing(NOW, draining));
  if (state === 'paused') head.apply(ruleFor('sending', 'auth refused'), answer('auth refused', 10), timing(NOW, draining));
  return { queue, head, n };
}

/** One line per pair and case: the decision, or the reason it cannot happen; and every invariant broken. */
export function walkRules(): { cells: string[]; broken: string[] } {
  const cells: string[] = [];
  const broken: string[] = [];
  for (const state of STATES) {
    for (const outcome of Object.keys(OUTCOMES) as Outcome[]) {
      const rule = RULES[state][outcome];
      if (rule === undefined) {
        let threw = false;
        try {
          ruleFor(state, outcome);
        } catch {
          threw = true;
        }
        if (!threw) broken.push(state + ' / ' + outcome + ': no rule, yet ruleFor did not throw');
        cells.push(state + ' / ' + outcome + ': impossible');
        continue;
      }
      // An unknown batch is read back early (flush(), stop()) or once settled; everything else once.
      const cases = state === 'unknown' ? [NOW + 1, NOW + SETTLE] : [NOW];
      for (const now of cases) {
        for (const draining of [false, true]) {
          const what = state + ' / ' + outcome + ' at +' + (now - NOW) + (draining ? ' draining' : '');
          const { queue, head, n } = headIn(state, draining);
          const early = state === 'unknown' && !head.settled(now);
          let d;
          try {
            d = head.apply(rule, answer(outcome, n || 10), timing(now, draining));
          } catch (e) {
            // The one refusal the head makes: an early read deciding "not stored".
            if (!(early && outcome === 'read not stored')) broken.push(what + ': apply threw ' + String(e));
            cells.push(what + ': refused');
            continue;
          }
          if (early && outcome === 'read not stored') broken.push(what + ': an early read-back decided "not stored"');
          cells.push(what + ': ' + d.step + ' → ' + head.state + ' count ' + head.count + ' at +' + (head.at - now) + (head.firm ? ' firm' : '') + ' attempt ' + head.attempt);
          if (head.state !== rule.to) broken.push(what + ': went to ' + head.state + ', the rule says ' + rule.to);
          if (queue.inFlight !== head.count) broken.push(what + ': ' + queue.inFlight + ' locked, the head reasons about ' + head.count);
          // Samples that go again without a verdict: from an unknown outcome, unless a settled read said "not stored".
          const again = d.step === 'send again' || d.step === 'back off';
          const blind = (state === 'unknown' && outcome !== 'read not stored') || rule.ambiguous;
          if (again && blind && !rule.unresolved) broken.push(what + ': goes again without knowledge, not counted unresolved');
          if (outcome === 'read undecided' && !rule.unresolved) broken.push(what + ': undecided, not counted unresolved');
          if (outcome === 'throttled' && head.at < now + 5_000) broken.push(what + ': at is before the Retry-After');
          if (head.firm) {
            const at = head.at;
            head.hurry(now, false);
            if (head.at !== at) broken.push(what + ': flush() moved a firm wait');
          }
          // Overflow: evictions take only unlocked samples, so what the head holds keeps its place.
          const held: number[] = [];
          for (let i = 0; i < head.count; i++) held.push(queue.valueAt(i) as number);
          for (let i = 0; i < 40; i++) queue.push(2, 1000 + i, i, i);
          for (let i = 0; i < held.length; i++) if (queue.valueAt(i) !== held[i]) broken.push(what + ': locked sample ' + i + ' was evicted or moved');
        }
      }
    }
  }
  return { cells, broken };
}
