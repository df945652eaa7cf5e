// The project's CLI and library built for a test, the soak or a benchmark: the same bundles as `npm run
// build`, into a directory of their own so they are never stale. No vitest here: the benchmarks import it
// too, bundled into a directory under tmp/, which is why the root is looked for rather than fixed.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The nearest folder at or above `from` that holds scripts/build.mjs: the project, from this file or a bundle of it. */
function projectRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'scripts', 'build.mjs'))) return dir;
    if (dirname(dir) === dir) throw new Error('no scripts/build.mjs above ' + from);
  }
}

export const ROOT = projectRoot(import.meta.dirname);

/** A work directory under the project (ignored by git), so that bundles resolve packages from node_modules. */
export function workDir(prefix: string): { dir: string; remove: () => void } {
  // A fresh clone has no tmp/ yet.
  mkdirSync(join(ROOT, 'tmp'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, 'tmp', prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Builds the bundles into `dir` (with type declarations if asked); returns the CLI's path. */
export function buildInto(dir: string, types = false): string {
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs'), '--outdir', dir, ...(types ? ['--types'] : [])], { cwd: ROOT });
  return join(dir, 'cli.js');
}
