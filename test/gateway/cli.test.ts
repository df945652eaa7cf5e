// `feed-agent gateway` from the built CLI: every mistake of a config at once (exit 2), a secret's value
// never quoted, a missing protocol library named, its guarantees in --help, the README's commands.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { ROOT, workDir } from '../support/build';
import { BAD, EXPECTED } from './fixtures/bad-config';
import { SEED } from './support';

const run = promisify(execFile);

describe('feed-agent gateway', () => {
  const work = workDir('gw-cli-');
  let cli = '';
  beforeAll(() => {
    cli = join(inject('built'), 'cli.js');
  });
  afterAll(work.remove);

  it('exits 2 listing every mistake of a config', async () => {
    const file = join(work.dir, 'bad.json');
    writeFileSync(file, JSON.stringify(BAD));
    const result = await run(process.execPath, [cli, 'gateway', '--config', file]).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(result.code).toBe(2);
    for (const line of EXPECTED) expect(result.stderr).toContain(line);
    expect(result.stderr).not.toContain('written-in-the-config');
  });

  it('names what to install when the config needs a protocol library that is missing', async () => {
    const file = join(work.dir, 'needs-peers.json');
    writeFileSync(
      file,
      JSON.stringify({
        service: { url: 'http://127.0.0.1:9' },
        queue: { dir: 'q' },
        mqtt: { url: 'mqtt://127.0.0.1:9' },
        modbus: { plc: { host: '127.0.0.1' } },
        metrics: false,
        devices: [{ publicKey: 'K', tokenEnv: 'T', resources: [{ id: 1, mqtt: { topic: 't' } }, { id: 2, modbus: { source: 'plc', kind: 'coil', address: 0 } }] }],
      }),
    );
    const hooks = join(import.meta.dirname, 'fixtures', 'without-peers.mjs');
    const result = await run(process.execPath, ['--import', hooks, cli, 'gateway', '--config', file], { env: { ...process.env, T: 'token' } }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('this config needs mqtt and modbus-serial, not installed: npm install mqtt modbus-serial');
  });

  it('states its guarantees in --help', async () => {
    const { stdout } = await run(process.execPath, [cli, 'gateway', '--help']);
    expect(stdout).toMatch(/PUBACK/);
    expect(stdout).toMatch(/kill -9/);
    expect(stdout).toMatch(/power cut/);
    expect(stdout).toMatch(/SIGHUP/);
  });

  it("checks examples/gateway.json with the README's commands as written: the tokens it gives are the demo's", async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    // --help sends the reader there for it.
    expect(readme).toContain('`npm run gateway:demo -- --field-only`');
    const [, exported, check] = /```sh\nexport (BAY1_TOKEN=[^\n]*)\nnpx feed-agent gateway (--check --config \S+) .*\n/.exec(readme) ?? [];
    const env = Object.fromEntries(exported.split(' ').map((pair) => pair.split('=')));
    expect(env).toEqual(Object.fromEntries(SEED.devices.map((d, i) => [`BAY${i + 1}_TOKEN`, d.token])));
    const { stdout } = await run(process.execPath, [cli, 'gateway', ...check.split(' ')], { cwd: ROOT, env: { ...process.env, ...env } });
    expect(stdout).toBe('examples/gateway.json: 3 devices, no mistakes\n');
  });
});
