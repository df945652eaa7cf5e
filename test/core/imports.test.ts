// No two modules import each other, directly or around a longer loop (issue 29): each part is handed what
// it needs, so the import graph of src/ and platforms/ has no cycle, type imports included.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(__dirname, '..', '..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sources(path);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The modules a file imports or re-exports by a relative path, resolved to files. */
export function importsOf(file: string, text = readFileSync(file, 'utf8')): string[] {
  const found: string[] = [];
  for (const [, spec] of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const base = resolve(dirname(file), spec.replace(/\.js$/, ''));
    const hit = [base + '.ts', base + '.tsx', join(base, 'index.ts')].find((p) => existsSync(p));
    if (hit !== undefined) found.push(hit);
  }
  return found;
}

/** The first cycle of the graph, as the files around it, or null. */
export function findCycle(graph: Map<string, string[]>): string[] | null {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string): string[] | null => {
    state.set(node, 'open');
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') return [...path.slice(path.indexOf(next)), next];
      if (state.get(next) === undefined) {
        const cycle = visit(next);
        if (cycle !== null) return cycle;
      }
    }
    path.pop();
    state.set(node, 'done');
    return null;
  };
  for (const node of graph.keys()) {
    if (state.get(node) !== undefined) continue;
    const cycle = visit(node);
    if (cycle !== null) return cycle;
  }
  return null;
}

describe('the import graph of src/ and platforms/', () => {
  const files = [...sources(join(root, 'src')), ...sources(join(root, 'platforms'))];
  const graph = new Map(files.map((f) => [f, importsOf(f)]));

  it('has no cycle', () => {
    const cycle = findCycle(graph);
    expect(cycle?.map((f) => relative(root, f)).join(' → ') ?? 'none').toBe('none');
  });

  it('is read as written: a type import counts, and a loop through three modules is found', () => {
    expect(importsOf(join(root, 'src/core/x.ts'), "import type { Rule } from './rules';\nexport { a } from './agent';")).toEqual([
      join(root, 'src/core/rules.ts'),
      join(root, 'src/core/agent.ts'),
    ]);
    expect(findCycle(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']]]))).toEqual(['a', 'b', 'c', 'a']);
    expect(findCycle(new Map([['a', ['b']], ['b', ['c']], ['c', []]]))).toBeNull();
  });

  it('covers the core and the adapters', () => {
    expect(files.length).toBeGreaterThan(60);
    expect([...graph.values()].flat().length).toBeGreaterThan(100);
  });
});
