// Docs describe today (issue 40): a table cell holds a figure, what it measures and the command, not a
// run's history, which goes to docs/bench-log.md. A cell over a paragraph (120 words) is history or prose.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(__dirname, '..', '..');
const MOST_WORDS = 120;

/** Every table cell over `most` words in a Markdown text: its line (1-based) and word count. */
function longCells(text: string, most = MOST_WORDS): { line: number; words: number }[] {
  const found: { line: number; words: number }[] = [];
  let fenced = false;
  text.split('\n').forEach((row, i) => {
    if (/^\s*(```|~~~)/.test(row)) fenced = !fenced;
    if (fenced || !row.trimStart().startsWith('|')) return;
    for (const cell of row.split('|')) {
      const words = cell.split(/\s+/).filter(Boolean).length;
      if (words > most) found.push({ line: i + 1, words });
    }
  });
  return found;
}

const docs = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

describe('the tables of README.md and docs/*.md', () => {
  it(`hold no cell over ${MOST_WORDS} words`, () => {
    const long = docs.flatMap((file) =>
      longCells(readFileSync(join(root, file), 'utf8')).map((c) => `${file}:${c.line}: a cell of ${c.words} words`),
    );
    expect(long, 'move run history to docs/bench-log.md and explanations below the table').toEqual([]);
  });

  it('are read row by row: a long cell is found on its line, text in a code block is not a table', () => {
    const cell = Array.from({ length: 121 }, () => 'w').join(' ');
    const text = ['# t', '', '| a | b |', '|---|---|', `| x | ${cell} |`, '```', `| ${cell} |`, '```', `| ${cell}`].join('\n');
    expect(longCells(text)).toEqual([
      { line: 5, words: 121 },
      { line: 9, words: 121 },
    ]);
    expect(longCells(text.replace(/ w\b/, ''))).toEqual([{ line: 9, words: 121 }]);
  });
});
