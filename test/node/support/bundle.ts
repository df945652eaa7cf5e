// Child processes run plain JavaScript: esbuild bundles a TypeScript entry, imports and all, into one file.
import { basename, join } from 'node:path';

import { build } from 'esbuild';

/** Bundles `entry` (a path relative to this folder) into `outDir` and returns the script's path. */
export async function bundle(entry: string, outDir: string): Promise<string> {
  const outfile = join(outDir, basename(entry, '.ts') + '.mjs');
  await build({
    entryPoints: [new URL(entry, import.meta.url).pathname],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    logLevel: 'silent',
  });
  return outfile;
}
