// The backlog bound an ESP32 build gets, as the real mcconfig merges it: each flash layout's own
// (platforms/moddable/esp32/flash-<layout>.json, which manifest.json's esp32 section includes), and a
// backlogBytes= on the build line over it. mcconfig alone, without make: it writes the merged config
// (mc.config.js, what the firmware imports as mc/config) before any compiler runs, so the ESP32 toolchain is
// not needed. Runs where the SDK is installed (MODDABLE set, its tools built); elsewhere skipped.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { flashLayouts, layoutBacklogBytes } from './flash-layout';
import { buildFailed, findSdk } from './sdk';

const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const sdk = findSdk(ROOT);
const dirs: string[] = [];

/** mcconfig's merged config for an ESP32 build of `layout`, and the partition table its makefile names. */
function configured(layout: string, line: string[] = []): { config: string; partitions: string } {
  if (typeof sdk === 'string') throw new Error(sdk);
  const out = mkdtempSync(join(tmpdir(), 'feed-agent-flash-layout-'));
  dirs.push(out);
  const args = ['-p', 'esp32', '-o', out, 'manifest.json', ...line];
  const run = spawnSync('mcconfig', args, { cwd: ROOT, env: { ...process.env, MODDABLE: sdk.moddable, PATH: sdk.path, FEED_AGENT_FLASH: layout }, encoding: 'utf8' });
  if (run.status !== 0) throw buildFailed('mcconfig ' + args.join(' '), run.stdout + run.stderr);
  const tmp = join(out, 'tmp', 'esp32', 'release', basename(ROOT));
  const partitions = /^PARTITIONS_FILE = (.*)$/m.exec(readFileSync(join(tmp, 'makefile'), 'utf8'))?.[1] ?? '';
  return { config: readFileSync(join(tmp, 'mc.config.js'), 'utf8'), partitions };
}

if (typeof sdk === 'string') console.log('flash layout tests skipped: ' + sdk);

describe.skipIf(typeof sdk === 'string')('an ESP32 build\'s backlog bound (mcconfig, Moddable SDK)', () => {
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it.each(flashLayouts())('is the %s layout\'s own, beside its partition table', (layout) => {
    const { config, partitions } = configured(layout);
    expect(partitions).toBe(join(ROOT, 'platforms/moddable/esp32/partitions-' + layout + '.csv'));
    expect(config).toContain('\t"backlogBytes": ' + layoutBacklogBytes(layout) + ',\n');
  });

  it('is the build line\'s when it gives one', () => {
    expect(configured('8mb', ['backlogBytes=2097152']).config).toContain('\t"backlogBytes": "2097152",\n');
  });
});
