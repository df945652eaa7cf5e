// mkdir -p that always ends. Node's own `mkdirSync(dir, { recursive: true })` (20.x and later) never returns
// when a directory exists but refuses children with ENOENT (anything under /proc, a stale mount): it reads
// ENOENT as "the parent is missing", creates the parent (EEXIST: fine) and tries the child again, forever,
// at 100 % CPU. Here each missing directory is tried once, top down, so the first refusal is the error.
import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Creates `dir` and every missing parent; throws the first mkdir's own error (ENOENT, EACCES, ENOTDIR …). */
export function makeDirs(dir: string): void {
  const missing: string[] = [];
  for (let path = resolve(dir); !exists(path); path = dirname(path)) {
    missing.push(path);
    if (dirname(path) === path) break;
  }
  for (let i = missing.length - 1; i >= 0; i--) {
    try {
      mkdirSync(missing[i]);
    } catch (e) {
      // Made by someone else in between: as good as made here.
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}
