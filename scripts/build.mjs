// Bundles the project's Node entry points into dist/ (or --outdir DIR). Add an entry to ENTRIES to ship
// another one. Native and installed packages stay external: they are resolved from node_modules at run time.
import { build } from 'esbuild';
import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const ENTRIES = [{ in: 'src/cli/main.ts', out: 'cli', executable: true }];

const { values } = parseArgs({ options: { outdir: { type: 'string', default: 'dist' } } });

await Promise.all(
  ENTRIES.map(async (entry) => {
    const outfile = join(values.outdir, entry.out + '.js');
    await build({
      entryPoints: [entry.in],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      banner: entry.executable ? { js: '#!/usr/bin/env node' } : {},
      logLevel: 'warning',
    });
    if (entry.executable) chmodSync(outfile, 0o755);
  }),
);
