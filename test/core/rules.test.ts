// The delivery engine's rules (src/core/delivery/rules.ts): docs/architecture.md holds the tables and the diagram
// generated from them, each outcome's example answer is classified as that outcome, every event (answers
// and the agent's own moves) has a row somewhere, every (state × event) pair keeps the engine's
// invariants (test/support/engine-walk.ts), and every failing cycle waits longer each time
// (test/support/engine-cycles.ts); on XS: the probe `rules`.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Outcome, State } from '../../src/core/delivery/rules';
import { RULES } from '../../src/core/delivery/rules';
import { EVENTS, OUTCOMES, STATES, withEngineTables } from '../support/engine-tables';
import { walkRules } from '../support/engine-walk';
import { impoliteCycles } from '../support/engine-cycles';

describe('the rules of delivery', () => {
  it('docs/architecture.md holds the tables and the diagram generated from RULES (node scripts/engine-tables.mjs)', () => {
    const doc = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');
    expect(doc, 'stale: run node scripts/engine-tables.mjs').toBe(withEngineTables(doc));
    expect(doc).not.toMatch(/reconciling/);
    // The diagram is the generated one: no other drawing of the states stands beside it.
    expect(doc.match(/stateDiagram/g)).toHaveLength(1);
  });

  for (const name of Object.keys(OUTCOMES) as Outcome[]) {
    it('classifies its example of "' + name + '" as such', () => {
      expect(OUTCOMES[name].example()).toBe(name);
    });
  }

  it('has a row for every event in some state, and no row for an event it does not know', () => {
    const states = Object.keys(STATES) as State[];
    expect(states.sort()).toEqual(Object.keys(RULES).sort());
    for (const event of EVENTS) expect(states.some((s) => RULES[s][event] !== undefined), event).toBe(true);
    for (const s of states) for (const event of Object.keys(RULES[s])) expect(EVENTS, s + ' / ' + event).toContain(event);
  });

  it('keeps every invariant in every pair of state and event, answers and the agent\'s own moves', () => {
    const { cells, broken } = walkRules();
    expect(broken).toEqual([]);
    // Every pair, twice (drained or not), an unknown batch's at two times.
    const states = Object.keys(STATES).length;
    expect(cells).toHaveLength((states + 1) * EVENTS.length * 2);
    expect(cells.filter((c) => c.endsWith(': impossible')).length).toBeGreaterThan(0);
    // An early read-back that says "not stored" is refused by the head, drained or not.
    expect(cells.filter((c) => c.startsWith('unknown / read not stored at +1')).every((c) => c.endsWith(': refused'))).toBe(true);
  });

  it('is polite: every cycle through a failure passes a wait that grows with the attempts, or stores something', () => {
    expect(impoliteCycles(RULES)).toEqual([]);
  });

  it('names the cycle of a table that is not: a batch read back "not stored" sent again at once, as before issue 38', () => {
    const unknown = { ...RULES.unknown, 'read not stored': { ...RULES.unknown['read not stored']!, wait: 'now' as const, attempt: 'keep' as const } };
    expect(impoliteCycles({ ...RULES, unknown })).toEqual([
      'sending —unknown after reset→ unknown —read not stored→ idle —send→ sending',
      'sending —unknown after timeout→ unknown —read not stored→ idle —send→ sending',
      'isolating —unknown after reset→ unknown —read not stored→ idle —send→ sending —refused element→ isolating',
      'isolating —unknown after timeout→ unknown —read not stored→ idle —send→ sending —refused element→ isolating',
    ]);
  });
});
