// Node-RED, the baseline of the gateway's comparison (bench/gateway-mqtt.ts). It is no dependency of the
// project: its two hundred packages would more than double every developer's `npm install` for one
// benchmark. The first run that needs it installs the version below with npm into bench/node-red/cache/
// (ignored by git); later runs find it there.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

import { ROOT } from '../test/support/build';

/** The version the documented comparison ran (docs/gateway.md). */
export const NODE_RED_VERSION = '4.1.15';
const CACHE = join(ROOT, 'bench', 'node-red', 'cache');
const PACKAGE = join(CACHE, 'node_modules', 'node-red');

/** Node-RED's red.js, installed first if it is not there; throws, saying what to do, when npm cannot. */
export function nodeRedScript(): string {
  const red = join(PACKAGE, 'red.js');
  if (installedVersion() === NODE_RED_VERSION) return red;
  // No install scripts: Node-RED needs none, and its optional native bcrypt falls back to bcryptjs.
  const args = ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--ignore-scripts', '--prefix', relative(ROOT, CACHE), `node-red@${NODE_RED_VERSION}`];
  console.error(`bench: the comparison installs Node-RED ${NODE_RED_VERSION} (no dependency of the project), once: npm ${args.join(' ')}`);
  const npm = spawnSync('npm', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (npm.status === 0 && installedVersion() === NODE_RED_VERSION) return red;
  // npm's first lines say what failed (its code, then the error); a stack and advice follow.
  const said = (npm.stderr ?? '').split('\n').filter((line) => /^npm error \S/.test(line)).slice(0, 4).map((line) => line.slice('npm error '.length));
  const why = npm.error?.message ?? `npm exited with ${npm.status}: ${said.join('; ')}`;
  throw new Error(
    `the Node-RED comparison needs Node-RED ${NODE_RED_VERSION}, and it could not be installed (${why}).\n` +
      `Install it from the project's folder with: npm ${args.join(' ')}\n` +
      'or run the other parts alone: FEED_AGENT_BENCH_GATEWAY_PARTS=memory,append,saturation,kills',
  );
}

function installedVersion(): string | null {
  const manifest = join(PACKAGE, 'package.json');
  return existsSync(manifest) ? (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version : null;
}
