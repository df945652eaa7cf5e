// No two modules import each other (issue 29): the import graph of src/ and platforms/ has no circle, and
// no arrow runs from src/ up into platforms/ (issue 40). Every static import counts, `import type` and a
// type's `import('…')` too (a circle of types is still a circle to a reader); a dynamic import() that loads
// code on demand does not. A relative import that names no file fails here too, so that the graph this test
// walks is the whole graph.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const FOLDERS = ['src', 'platforms'];
const SOURCE = /\.(ts|mts|js|mjs)$/;

function filesUnder(folder: string): string[] {
  return readdirSync(join(ROOT, folder)).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(join(ROOT, path)).isDirectory()) return filesUnder(path);
    return SOURCE.test(name) ? [path] : [];
  });
}

/** The specifiers a file imports statically: declarations, re-exports and import types (JSDoc's too). */
function specifiers(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const kind = /\.m?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const found = new Set<string>();
  const literal = (node: ts.Node | undefined): void => {
    if (node && ts.isStringLiteral(node)) found.add(node.text);
  };
  const seen = new Set<ts.Node>(); // a JSDoc tag's children lead back to the same JSDoc
  const visit = (node: ts.Node): void => {
    if (seen.has(node)) return;
    seen.add(node);
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) literal(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) literal(node.moduleReference.expression);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) literal(node.argument.literal);
    for (const doc of ts.getJSDocCommentsAndTags(node)) ts.forEachChild(doc, visit);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return [...found];
}

/** The file a relative specifier names (TypeScript's rules: no extension, or .js for .ts), or undefined. */
function resolveImport(from: string, specifier: string): string | undefined {
  const base = relative(ROOT, resolve(ROOT, dirname(from), specifier));
  const stem = base.replace(/\.(m?js)$/, '');
  const candidates = [base, stem + '.ts', stem + '.mts', stem + '.d.ts', stem + '.js', stem + '.mjs', join(base, 'index.ts')];
  return candidates.find((path) => SOURCE.test(path) && existsSync(join(ROOT, path)) && statSync(join(ROOT, path)).isFile());
}

/** Each file's imports within the project; relative imports that name no file are listed apart. */
function importGraph(files: string[]): { edges: Map<string, string[]>; unresolved: string[] } {
  const edges = new Map<string, string[]>();
  const unresolved: string[] = [];
  for (const file of files) {
    const targets: string[] = [];
    for (const specifier of specifiers(file)) {
      if (!specifier.startsWith('.')) continue; // a package, Node's or the SDK's module
      const target = resolveImport(file, specifier);
      if (target === undefined) unresolved.push(file + ' → ' + specifier);
      else targets.push(target);
    }
    edges.set(file, targets);
  }
  return { edges, unresolved };
}

/** Every circle of the graph, each as one loop of files (a → b → … → a), one per strongly connected part. */
function circles(edges: Map<string, string[]>): string[][] {
  // Tarjan's strongly connected components; a part of two or more files, or a file importing itself, is a circle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const parts: string[][] = [];
  let next = 0;
  const connect = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const part: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      part.push(w);
    } while (w !== v);
    if (part.length > 1 || (edges.get(v) ?? []).includes(v)) parts.push(part);
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) connect(v);
  // Name each part by one loop through it: the shortest way back to its first file.
  return parts.map((part) => {
    const inPart = new Set(part);
    const start = [...part].sort()[0];
    const before = new Map<string, string>();
    const queue = [start];
    while (queue.length > 0) {
      const v = queue.shift()!;
      for (const w of edges.get(v) ?? []) {
        if (!inPart.has(w)) continue;
        if (w === start) {
          const loop = [start];
          for (let u = v; u !== start; u = before.get(u)!) loop.splice(1, 0, u);
          return [...loop, start];
        }
        if (!before.has(w)) {
          before.set(w, v);
          queue.push(w);
        }
      }
    }
    return [start, start];
  });
}

describe('the import graph of src/ and platforms/', () => {
  const files = FOLDERS.flatMap(filesUnder);
  const { edges, unresolved } = importGraph(files);

  it('reads every file and resolves every relative import', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(unresolved).toEqual([]);
    // The reading sees type imports: the core's agent imports the host contract's types only.
    expect(edges.get('src/core/agent.ts')).toContain('src/core/host/host.ts');
  });

  it('has no circle: no two modules import each other, directly or through others', () => {
    expect(circles(edges).map((loop) => loop.join(' → '))).toEqual([]);
  });

  it('points down only: no file under src/ imports one under platforms/', () => {
    // src/ is the core and the service, which any platform may use; the Node programs (the CLI, the
    // gateway, the simulator) live in platforms/node, beside the host they run on.
    const upward = [...edges]
      .filter(([from]) => from.startsWith('src/'))
      .flatMap(([from, targets]) => targets.filter((to) => to.startsWith('platforms/')).map((to) => from + ' → ' + to));
    expect(upward).toEqual([]);
  });

  it('names a circle where there is one', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
      ['e', ['e']],
    ]);
    expect(circles(graph)).toEqual([['a', 'b', 'c', 'a'], ['e', 'e']]);
  });
});
