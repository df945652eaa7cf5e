// The manifests list their modules one by one (a wildcard would make a module of every file in a folder,
// tsconfig.json included), so a module added to the core or the adapter must be added there too, or the
// device build fails to link ("module not found"). This checks it without the SDK: the modules the
// manifests name are exactly those the firmware, the adapter's entry and the core's entry reach through
// imports that stay in the compiled code (not `import type`).
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const ENTRIES = ['platforms/moddable/firmware/main.ts', 'platforms/moddable/index.ts', 'src/core/index.ts'];
/** What an import of the SDK or of the app looks like: not a path of this project. */
const relativeImport = (specifier: string): boolean => specifier.startsWith('.');

/** The project files reached from `entries` through value imports and re-exports, relative to the root. */
function reached(entries: string[]): string[] {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.ES2020);
    for (const statement of source.statements) {
      let specifier: ts.Expression | undefined;
      if (ts.isImportDeclaration(statement) && !statement.importClause?.isTypeOnly) specifier = statement.moduleSpecifier;
      else if (ts.isExportDeclaration(statement) && !statement.isTypeOnly) specifier = statement.moduleSpecifier;
      if (specifier === undefined || !ts.isStringLiteral(specifier) || !relativeImport(specifier.text)) continue;
      // Imports naming only types are erased too, whatever their form.
      const clause = ts.isImportDeclaration(statement) ? statement.importClause : undefined;
      const bindings = clause?.namedBindings;
      if (clause && !clause.name && bindings && ts.isNamedImports(bindings) && bindings.elements.every((e) => e.isTypeOnly)) continue;
      visit(relative(ROOT, resolve(ROOT, dirname(file), specifier.text + '.ts')));
    }
  };
  entries.forEach(visit);
  return [...seen].sort();
}

/** The files a manifest's `modules` map to, relative to the root, and whether each is preloaded. */
function listed(manifest: string): { files: string[]; notPreloaded: string[] } {
  const m = JSON.parse(readFileSync(join(ROOT, manifest), 'utf8')) as { modules: Record<string, string>; preload: string[] };
  const files: string[] = [];
  const notPreloaded: string[] = [];
  for (const [name, path] of Object.entries(m.modules)) {
    if (!name.startsWith('feed-agent/')) continue;
    files.push(relative(ROOT, resolve(ROOT, dirname(manifest), path + '.ts')));
    if (!m.preload.includes(name)) notPreloaded.push(name);
  }
  return { files, notPreloaded };
}

describe('the Moddable manifests', () => {
  it('list exactly the modules the firmware reaches, each under the name of its path, all preloaded', () => {
    const adapter = listed('platforms/moddable/manifest.json');
    const app = listed('manifest.json');
    expect([...adapter.files, ...app.files].sort()).toEqual(reached(ENTRIES));
    expect([...adapter.notPreloaded, ...app.notPreloaded]).toEqual([]);
    for (const manifest of ['platforms/moddable/manifest.json', 'manifest.json']) {
      const m = JSON.parse(readFileSync(join(ROOT, manifest), 'utf8')) as { modules: Record<string, string> };
      for (const [name, path] of Object.entries(m.modules)) {
        // XS resolves a relative import against the importing module's name: names must mirror paths.
        if (name.startsWith('feed-agent/')) expect(name).toBe('feed-agent/' + relative(ROOT, resolve(ROOT, dirname(manifest), path)));
      }
    }
  });
});
