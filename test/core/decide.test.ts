// The decision table of docs/architecture.md is decide()'s test: the document holds exactly the rows of
// test/support/decision-table.ts, and decide() gives each row's decision (on XS too: the probe `decisions`).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROWS, decideRow, describeDecision, markdownTable } from '../support/decision-table';

describe('the decision table', () => {
  it('is in docs/architecture.md, row for row', () => {
    expect(readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8')).toContain(markdownTable());
  });

  for (const row of ROWS) {
    it(row.slice(0, 3).join(' / ') + ' → ' + row[3], () => {
      expect(describeDecision(decideRow(row), row[1] === 'batch of 1' ? 1 : 10)).toBe(row[3]);
    });
  }
});
