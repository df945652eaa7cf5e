#!/usr/bin/env node
// The `feed-agent` command: runs the built CLI, dist/cli.js. In a clone of the repository before its first
// build (`npx feed-agent` right after `npm install`), it builds dist/ first with the project's build script,
// so the package needs no install script (npm would warn every user of it about one).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const cli = new URL('../../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  const built = spawnSync(process.execPath, [root + 'scripts/build.mjs', '--outdir', root + 'dist'], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (built.status !== 0) {
    console.error('feed-agent: dist/ is not built, and building it failed (npm run build)');
    process.exit(1);
  }
}
await import(cli.href);
