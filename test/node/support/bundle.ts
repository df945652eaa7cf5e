// Child processes run plain JavaScript: esbuild bundles a TypeScript entry, imports and all, into one file.
import { basename, join } from 'node:path';

import { build } from 'esbuild';

/**
 * Bundles `entry` (a path relative to this folder, or absolute) into `outDir` and returns the script's path.
 * `packages: 'external'` leaves installed packages out, loaded from node_modules when it runs: for an entry
 * that imports one (undici, which does not bundle into ESM), in an `outDir` under the project.
 */
export async function bundle(entry: string, outDir: string, packages?: 'external'): Promise<string> {
  const outfile = join(outDir, basename(entry, '.ts') + '.mjs');
  await build({
    entryPoints: [new URL(entry, import.meta.url).pathname],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    packages,
    logLevel: 'silent',
  });
  return outfile;
}
