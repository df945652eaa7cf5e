// The README is a front door (issue 29): short, its links lead somewhere, and its performance table, like
// docs/performance.md's, is the one bench/figures.json gives (scripts/figures-table.mjs).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

// @ts-expect-error: a plain ES module of the scripts, without declarations
import { ROWS, TABLES, chosen, expected, readFigures, withTable } from '../../scripts/figures-table.mjs';

const root = join(__dirname, '..', '..');

describe('the README and the figures tables', () => {
  it('are what bench/figures.json gives (npm run figures writes them)', () => {
    for (const t of expected()) expect(t.now, `${t.file} is stale: run node scripts/figures-table.mjs`).toBe(t.next);
  });

  it('show a figure that changed: a table written before the run differs from the one after it', () => {
    const data = readFigures();
    const [key] = ROWS[0].slice(1, 2);
    const readme = TABLES[0];
    const before = withTable(readFileSync(readme.file, 'utf8'), readme, chosen(data));
    const after = withTable(before, readme, chosen({ ...data, figures: { ...data.figures, [key]: data.figures[key] + 1 } }));
    expect(after).not.toBe(before);
  });

  it('refuse a row whose figure no run measured', () => {
    expect(() => chosen({ runs: {}, figures: {} })).toThrow(/lacks xs.agentSlots/);
  });

  it('keep the README under 200 lines, the two commands first', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThan(200);
    const start = readme.indexOf('```sh\nnpm install\nnpm start\n```');
    expect(start).toBeGreaterThan(0);
    expect(start).toBeLessThan(readme.indexOf('\n## ', readme.indexOf('## Quick start') + 1));
    expect(readme.indexOf('npm test')).toBeLessThan(readme.indexOf('## On the device'));
  });

  it('link only to files that exist', () => {
    for (const file of ['README.md', ...TABLES.map((t: { file: string }) => t.file.slice(root.length + 1))]) {
      const text = readFileSync(join(root, file), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        expect(existsSync(join(root, dirname(file), target)), `${file} links to ${target}`).toBe(true);
      }
    }
  });
});
