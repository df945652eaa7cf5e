// `npm run bench [-- --json]`: bundles bench/main.ts with esbuild and runs it with node, passing the
// arguments on. The bundle goes under node_modules/.cache so that the packages it leaves external
// (xsnap, better-sqlite3, esbuild) resolve from the project's node_modules; the run's working
// directory is the project root, where the benchmarks find the sources they bundle for XS.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_BUNDLE } from './node-bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const outdir = join(root, 'node_modules', '.cache', 'feed-agent-bench');
mkdirSync(outdir, { recursive: true });
const outfile = join(outdir, 'main.mjs');

await build({ ...NODE_BUNDLE, entryPoints: [join(root, 'bench', 'main.ts')], outfile });

const run = spawnSync(process.execPath, ['--expose-gc', outfile, ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
process.exit(run.status ?? 1);
