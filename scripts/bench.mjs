// `npm run bench [-- --json] [-- --only NAME]`: bundles bench/main.ts with esbuild and runs it with node,
// passing the arguments on. The bundle goes into a directory of its own run under the project's tmp/ (ignored
// by git), so that the packages it leaves external (xsnap, better-sqlite3, esbuild) resolve from the
// project's node_modules and two runs, from one checkout or from worktrees sharing node_modules, never
// overwrite each other's bundle. The run's working directory is the project root, where the benchmarks
// find the sources they bundle for XS.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_BUNDLE } from './node-bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
mkdirSync(join(root, 'tmp'), { recursive: true });
const outdir = mkdtempSync(join(root, 'tmp', 'bench-'));
const outfile = join(outdir, 'main.mjs');

// Split: each section's module is a chunk that only its own process loads (bench/main.ts), so the
// packages one section imports (the XS harness's SES lockdown) are not evaluated in another's.
await build({ ...NODE_BUNDLE, entryPoints: { main: join(root, 'bench', 'main.ts') }, outdir, splitting: true, outExtension: { '.js': '.mjs' } });

const run = spawnSync(process.execPath, [outfile, ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
rmSync(outdir, { recursive: true, force: true });
process.exit(run.status ?? 1);
