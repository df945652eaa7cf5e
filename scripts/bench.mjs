// `npm run bench [-- --json] [-- --only NAME]`: bundles bench/main.ts with esbuild and runs it with node,
// passing the arguments on. The bundle goes under node_modules/.cache so that the packages it leaves external
// (xsnap, better-sqlite3, esbuild) resolve from the project's node_modules; the run's working
// directory is the project root, where the benchmarks find the sources they bundle for XS.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_BUNDLE } from './node-bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const outdir = join(root, 'node_modules', '.cache', 'feed-agent-bench');
mkdirSync(outdir, { recursive: true });
// The chunks of an earlier build are named by their hash: remove them, or they pile up.
for (const file of readdirSync(outdir)) if (file.endsWith('.mjs')) rmSync(join(outdir, file));
const outfile = join(outdir, 'main.mjs');

// Split: each section's module is a chunk that only its own process loads (bench/main.ts), so the
// packages one section imports (the XS harness's SES lockdown) are not evaluated in another's.
await build({ ...NODE_BUNDLE, entryPoints: { main: join(root, 'bench', 'main.ts') }, outdir, splitting: true, outExtension: { '.js': '.mjs' } });

const run = spawnSync(process.execPath, [outfile, ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
process.exit(run.status ?? 1);
