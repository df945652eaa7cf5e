// Bundles the project's Node entry points into dist/ (or --outdir DIR). Add an entry to ENTRIES to ship
// another one. Native and installed packages stay external: they are resolved from node_modules at run time.
// The default build also emits the type declarations that package.json's "exports" point at (dist/types);
// a build with --outdir (the tests' quick build) emits them only when asked with --types.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { NODE_BUNDLE } from './node-bundle.mjs';

const ENTRIES = [
  { in: 'platforms/node/cli/main.ts', out: 'cli', executable: true },
  // The library: `feed-agent` is the core, `feed-agent/node` the Node host and durable queue,
  // `feed-agent/service` the local service (it needs the optional peer better-sqlite3), `feed-agent/gateway` below.
  { in: 'src/core/index.ts', out: 'index' },
  { in: 'platforms/node/index.ts', out: 'node' },
  { in: 'src/service/index.ts', out: 'service' },
  // `feed-agent/gateway`: MQTT and Modbus field devices from a config file (optional peers mqtt, modbus-serial).
  { in: 'platforms/node/gateway/index.ts', out: 'gateway' },
];

const { version } = JSON.parse(readFileSync('package.json', 'utf8'));
const { values } = parseArgs({ options: { outdir: { type: 'string' }, types: { type: 'boolean' } } });
const outdir = values.outdir ?? 'dist';

await Promise.all(
  ENTRIES.map(async (entry) => {
    const outfile = join(outdir, entry.out + '.js');
    await build({
      ...NODE_BUNDLE,
      entryPoints: [entry.in],
      outfile,
      banner: entry.executable ? { js: '#!/usr/bin/env node' } : {},
      define: { FEED_AGENT_VERSION: JSON.stringify(version) },
    });
    if (entry.executable) chmodSync(outfile, 0o755);
  }),
);

// The dashboard page's files, served by the bundled service from `dashboard/` beside it (src/service/page.ts).
cpSync('src/service/dashboard', join(outdir, 'dashboard'), { recursive: true, filter: (file) => !file.endsWith('tsconfig.json') });

if (values.types === true || values.outdir === undefined) {
  const types = join(outdir, 'types');
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.types.json', '--outDir', types], { stdio: 'inherit' });
  for (const file of readdirSync(types, { recursive: true, encoding: 'utf8' })) {
    if (file.endsWith('.d.ts')) addExtensions(join(types, file));
  }
}

// The sources import extensionless, which a consumer's TypeScript refuses inside an ES module package
// under "moduleResolution": "node16"/"nodenext": the declarations get the `.js` paths Node would load.
function addExtensions(file) {
  const text = readFileSync(file, 'utf8');
  const fixed = text.replace(/((?:from |import\()['"])(\.{1,2}\/[^'"]*?)(['"])/g, (match, before, path, after) => {
    if (/\.[cm]?js$/.test(path)) return match;
    const index = existsSync(join(dirname(file), path, 'index.d.ts'));
    return before + path + (index ? '/index.js' : '.js') + after;
  });
  if (fixed !== text) writeFileSync(file, fixed);
}
