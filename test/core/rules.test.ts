// The delivery engine's rules (src/core/rules.ts): docs/architecture.md holds the tables generated from
// them, each outcome's example answer is classified as that outcome, and every (state × outcome) pair
// keeps the engine's invariants (test/support/engine-walk.ts; on XS: the probe `rules`).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/core/rules';
import { OUTCOMES, withEngineTables } from '../support/engine-tables';
import { walkRules } from '../support/engine-walk';

describe('the rules of delivery', () => {
  it('docs/architecture.md holds the tables generated from RULES (node scripts/engine-tables.mjs)', () => {
    const doc = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');
    expect(doc, 'stale: run node scripts/engine-tables.mjs').toBe(withEngineTables(doc));
    expect(doc).not.toMatch(/reconciling/);
  });

  for (const name of Object.keys(OUTCOMES) as Outcome[]) {
    it('classifies its example of "' + name + '" as such', () => {
      expect(OUTCOMES[name].example()).toBe(name);
    });
  }

  it('keeps every invariant in every pair of state and outcome', () => {
    const { cells, broken } = walkRules();
    expect(broken).toEqual([]);
    expect(cells.filter((c) => c.endsWith(': impossible')).length).toBeGreaterThan(0);
    // An early read-back that says "not stored" is refused by the head, drained or not.
    expect(cells.filter((c) => c.startsWith('unknown / read not stored at +1')).every((c) => c.endsWith(': refused'))).toBe(true);
  });
});
