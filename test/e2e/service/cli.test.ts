// `feed-agent serve` as a user runs it: the built CLI in a child process. Its first line, the demo
// device, the seed file and its errors, tokens kept out of the output, and a database that keeps every
// acknowledged feed through kill -9.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { rawData } from '../../../src/core/wire/validate';
import { DEMO_PUBLIC_KEY, DEMO_TOKEN, demoFleetDevice } from '../../../src/service';
import { ROOT, withBuiltCli } from '../support';
import { Served } from '../../support/serve';
import type { ServeOptions } from '../../support/serve';
import { device } from '../../support/client';
import { A, B, SEED } from '../../service/fixtures';

const { dir: work, cli } = withBuiltCli('service-cli-');

/** Starts `feed-agent serve ARGS`; resolves once its first line is out (or, with mayExit, it exited). */
function serve(args: string[], options?: ServeOptions): Promise<Served> {
  return Served.start(cli(), args, options);
}

/** A token a seed file gives without quotes: JSON.parse's message quotes its first ten characters. */
const UNQUOTED = 'NEWTOKEN0123456789abcdef';

/** The seed as a file whose first device's token is not quoted. */
function unquotedToken(seed: object): string {
  return JSON.stringify(seed).replace(`"token":"${A.token}"`, `"token":${UNQUOTED}`);
}

function seedFile(name: string, content: unknown): string {
  const file = join(work, name);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

describe('feed-agent serve', () => {
  it('prints exactly `listening on http://HOST:PORT` first, then the demo device a newcomer can curl', async () => {
    const s = await serve(['--port', '0']);
    expect(s.firstLine).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+$/);
    // The demo device's lines are the last of the banner.
    await s.line('public key');
    expect(s.output()).toContain(`public key  ${DEMO_PUBLIC_KEY}`);
    expect(s.output()).toContain(`token       ${DEMO_TOKEN}`);
    expect(s.output()).toContain(`curl ${s.url}/api/device/${DEMO_PUBLIC_KEY}/resource/101`);
    const demo = device(s.url, DEMO_PUBLIC_KEY, DEMO_TOKEN);
    expect((await demo.createFeed(102, 21.5)).status).toBe(200);
    expect((await demo.getResource(101)).json.payload.name).toBe('Door Contact');
    expect(await s.stop()).toBe(0);
  });

  it('serves a seed file and never prints its tokens, whatever the requests', async () => {
    const s = await serve(['--port', '0', '--seed', seedFile('seed.json', SEED)]);
    expect(s.firstLine).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+$/);
    const a = device(s.url, A.key, A.token);
    expect((await a.createFeed(73, 1)).status).toBe(200);
    expect((await a.getResource(73, '', { token: B.token })).status).toBe(401);
    expect((await a.createFeeds([{ id_resource: 73, input: 5 }], '', { token: A.token + 'x' })).status).toBe(401);
    expect((await device(s.url, DEMO_PUBLIC_KEY, DEMO_TOKEN).getResource(101)).status).toBe(404);
    await s.stop();
    expect(s.output()).not.toContain(A.token);
    expect(s.output()).not.toContain(B.token);
    expect(s.output()).not.toContain('demo device');
  });

  it('--demo-devices N serves a fleet of demo devices and prints how to simulate it', async () => {
    const s = await serve(['--port', '0', '--demo-devices', '5']);
    // The demo device's lines are the last of the banner.
    await s.line('public key');
    const last = demoFleetDevice(4);
    expect(s.output()).toContain(`simulate all of them: npx feed-agent simulate --url ${s.url} --devices 5`);
    expect(s.output()).toContain(`  5       ${last.publicKey}  ${last.token}  501-508`);
    expect(s.output()).toContain(`public key  ${DEMO_PUBLIC_KEY}`);
    const fifth = device(s.url, last.publicKey, last.token);
    expect((await fifth.createFeeds([{ id_resource: 502, input: 21.5 }, { id_resource: 505, input: 7 }])).status).toBe(200);
    // Each device's resources are its own.
    expect((await fifth.createFeed(102, 21.5)).status).toBe(404);
    expect(await s.stop()).toBe(0);

    for (const [args, message] of [
      [['--demo-devices', '2', '--seed', seedFile('seed.json', SEED)], '--demo-devices makes the demo fleet; it cannot be combined with --seed'],
      [['--demo-devices', '0'], '--demo-devices must be an integer from 1 to 100000, not "0"'],
    ]) {
      const refused = await serve(['--port', '0', ...args], { mayExit: true });
      expect(await refused.exited).toBe(2);
      expect(refused.output()).toContain(message);
    }
  });

  it('applies the seed file again on SIGUSR2: a token changed while it runs counts from the next request', async () => {
    const file = seedFile('rotating.json', SEED);
    const s = await serve(['--port', '0', '--seed', file]);
    const rotated = 'rotated-token-5e1d';
    const next = (line: string) => s.reloadSeed(line);
    expect((await device(s.url, A.key, A.token).createFeed(73, 1)).status).toBe(200);
    seedFile('rotating.json', { ...SEED, devices: [{ ...SEED.devices[0], token: rotated }, ...SEED.devices.slice(1)] });
    await next('seed applied again from ' + file);
    expect((await device(s.url, A.key, A.token).createFeed(73, 1)).status).toBe(401);
    expect((await device(s.url, A.key, rotated).createFeed(73, 1)).status).toBe(200);
    // A file that does not parse changes nothing; the token of the last good one stays. The message says
    // where, and quotes nothing: not the token left unquoted.
    seedFile('rotating.json', '{"subtypes": [');
    expect(await next('nothing changed')).toMatch(/rotating\.json: not JSON at line 1, column 15: the text ends too soon$/);
    expect((await device(s.url, A.key, rotated).createFeed(73, 0)).status).toBe(200);
    seedFile('rotating.json', unquotedToken(SEED));
    expect(await next('nothing changed')).toMatch(/rotating\.json: not JSON at line 1, column \d+: expected a value after the property name: .*null$/);
    expect(s.output()).not.toContain(UNQUOTED.slice(0, 4));
    seedFile('rotating.json', SEED);
    await next('seed applied again from ' + file);
    expect((await device(s.url, A.key, A.token).createFeed(73, 0)).status).toBe(200);
    expect(await s.stop()).toBe(0);
    expect(s.output()).not.toContain(A.token);
    expect(s.output()).not.toContain(rotated);
  });

  it('SIGHUP stops it, with --seed too, as a closed terminal stops any program', async () => {
    const s = await serve(['--port', '0', '--seed', seedFile('hang-up.json', SEED)]);
    s.child.kill('SIGHUP');
    const stillRunning = new Promise<string>((resolve) => setTimeout(() => resolve('still running after 10 s'), 10_000).unref());
    // Ended by the signal: no exit code.
    expect(await Promise.race([s.exited, stillRunning])).toBeNull();
    expect(s.output()).not.toContain('seed applied again');
  });

  it('without --seed, SIGUSR2 says there is nothing to apply again, and it goes on', async () => {
    const s = await serve(['--port', '0']);
    expect(await s.reloadSeed('SIGUSR2')).toBe('feed-agent serve: SIGUSR2: there is no --seed file to apply again');
    expect((await fetch(s.url + '/')).status).toBe(200);
    expect(await s.stop()).toBe(0);
  });

  it('refuses a bad seed file, naming the field, without starting', async () => {
    const broken = structuredClone(SEED) as unknown as { devices: { resources: Record<string, unknown>[] }[] };
    delete broken.devices[0].resources[1].lifetime;
    for (const [content, message] of [
      [broken, 'seed: devices[0].resources[1].lifetime is missing'],
      ['{"subtypes": [', 'bad.json: not JSON at line 1, column 15: the text ends too soon'],
      [unquotedToken(SEED), 'bad.json: not JSON at line 1, column '],
      [{ ...SEED, devices: [{ ...SEED.devices[0], token: 'has space' }] }, 'seed: devices[0].token must be 1 to 512 visible ASCII characters'],
    ] as const) {
      const s = await serve(['--port', '0', '--seed', seedFile('bad.json', content)], { mayExit: true });
      expect(await s.exited).toBe(2);
      expect(s.output()).toContain(message);
      expect(s.output()).not.toContain('listening on');
      expect(s.output()).not.toContain(UNQUOTED.slice(0, 4));
    }
  });

  it('refuses bad options with exit 2, as simulate does, pointing to --help', async () => {
    for (const [args, message] of [
      [['--colour'], 'feed-agent serve: unknown option --colour (see feed-agent serve --help)\n'],
      [['--port'], 'feed-agent serve: --port needs a value (see feed-agent serve --help)\n'],
      [['--port', '70000'], 'feed-agent serve: --port must be an integer from 0 to 65535, not "70000"\n'],
      [['--port', '-1'], 'feed-agent serve: --port must be an integer from 0 to 65535, not "-1"\n'],
      [['--max-ids', '-3'], 'feed-agent serve: --max-ids must be an integer from 1 to'],
      [['--seed', join(work, 'no-such-seed.json')], `feed-agent serve: cannot read the seed file ${join(work, 'no-such-seed.json')}: ENOENT`],
    ] as const) {
      const refused = await serve([...args], { mayExit: true });
      expect(await refused.exited, args.join(' ')).toBe(2);
      expect(refused.output()).toContain(message);
      expect(refused.output()).not.toContain('listening on');
    }
  });

  it('refuses a --db in no directory, a --host that is no address and a bad --rate-limit with exit 2, saying what is wrong', async () => {
    for (const [args, message] of [
      [['--db', '/nonexistent/dir/x.db'], 'feed-agent serve: --db /nonexistent/dir/x.db: the directory /nonexistent/dir does not exist\n'],
      [['--host', '999.1.1.1'], 'feed-agent serve: --host must be an IP address of this machine or a host name, not "999.1.1.1"\n'],
      [['--rate-limit', 'foo'], 'feed-agent serve: --rate-limit must be RPS or RPS:BURST, requests per second and a burst as positive integers (e.g. 10 or 10:20), not "foo"\n'],
      [['--rate-limit', '10:0'], 'not "10:0"\n'],
    ] as const) {
      const refused = await serve(['--port', '0', ...args], { mayExit: true });
      expect(await refused.exited, args.join(' ')).toBe(2);
      expect(refused.output()).toContain(message);
      expect(refused.output()).not.toContain('listening on');
    }
    // RPS:BURST as the help says.
    const limited = await serve(['--port', '0', '--rate-limit', '10:20']);
    expect(await limited.stop()).toBe(0);
  });

  it('refuses to serve the demo tokens, which the README prints, off loopback unless --allow-demo-token, before it listens', async () => {
    // Refused while the options are read: nothing is bound, so no address but loopback is ever used here.
    for (const host of ['0.0.0.0', '::', '192.0.2.1']) {
      const refused = await serve(['--port', '0', '--host', host], { mayExit: true });
      expect(await refused.exited, host).toBe(2);
      expect(refused.output()).toBe(
        `feed-agent serve: refusing to serve the demo devices off loopback: the demo devices' tokens are printed in the README, so on ${host} anyone on the network ` +
          'who reaches this port can write as them. Give --seed FILE with tokens of your own, or --allow-demo-token to serve the demo there anyway\n',
      );
    }
    const fleet = await serve(['--port', '0', '--host', '0.0.0.0', '--demo-devices', '3'], { mayExit: true });
    expect(await fleet.exited).toBe(2);
    // The flag is an option like any other; on loopback the demo needs no warning.
    const allowed = await serve(['--port', '0', '--host', '127.0.0.1', '--allow-demo-token']);
    await allowed.line('public key');
    expect(allowed.output()).not.toContain('warning');
    expect(await allowed.stop()).toBe(0);
  });

  it('refuses a port that browsers and fetch refuse to connect to (6000 would serve curl but not the dashboard)', async () => {
    // fetch itself refuses such a port before connecting: what the dashboard and the simulator would meet.
    await expect(fetch('http://127.0.0.1:6000/')).rejects.toMatchObject({ cause: { message: 'bad port' } });
    for (const port of ['6000', '10080', '1']) {
      const refused = await serve(['--port', port], { mayExit: true });
      expect(await refused.exited).toBe(2);
      expect(refused.output()).toBe(`feed-agent serve: --port: browsers and fetch refuse to connect to port ${port} (one of the fetch standard's "bad ports"): choose another\n`);
    }
  });
});

describe('feed-agent', () => {
  it('--version prints the version of package.json; an unknown command or option exits 2 and points to --help', () => {
    const run = (args: string[]) => spawnSync(process.execPath, [cli(), ...args], { encoding: 'utf8' });
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-v']) expect(run([flag])).toMatchObject({ status: 0, stdout: version + '\n', stderr: '' });
    expect(run(['sprout'])).toMatchObject({ status: 2, stdout: '', stderr: 'feed-agent: unknown command "sprout" (see feed-agent --help)\n' });
    expect(run(['--colour'])).toMatchObject({ status: 2, stdout: '', stderr: 'feed-agent: unknown option "--colour" (see feed-agent --help)\n' });
    expect(run(['--help'])).toMatchObject({ status: 0, stdout: expect.stringContaining('feed-agent --version') });
  });
});

describe('feed-agent serve --db', () => {
  it('keeps every feed it answered with 200 through kill -9, and ids keep increasing after', async () => {
    const db = join(work, 'feeds.db');
    const first = await serve(['--port', '0', '--seed', seedFile('seed.json', SEED), '--db', db]);
    const a = device(first.url, A.key, A.token);
    const acknowledged = new Map<number, string>();
    let stop = false;
    let requests = 0;
    // Four writers keep requests in flight; the kill lands among them.
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; !stop && i < 2000; i++) {
        requests++;
        const elements = Array.from({ length: 1 + (i % 20) }, (_, k) => ({ id_resource: 73 + ((i + k) % 2), input: (w * 7 + i + k) % 2 }));
        const reply = await (i % 3 === 0 ? a.createFeed(74, i % 100) : a.createFeeds(elements)).catch(() => null);
        if (reply?.status !== 200) continue;
        const feeds = Array.isArray(reply.json.payload) ? reply.json.payload : [reply.json.payload];
        for (const f of feeds) acknowledged.set(f.id_resource_feed, rawData(f.raw_data));
      }
    });
    while (requests < 300) await new Promise((r) => setTimeout(r, 10));
    first.child.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);
    await first.exited;
    expect(acknowledged.size).toBeGreaterThan(300);

    // Read the file directly: every acknowledged feed is there, with its value.
    const file = new Database(db);
    const stored = new Map(
      (file.prepare('SELECT id_resource_feed AS id, raw_data FROM feeds').all() as { id: number; raw_data: string }[]).map((r) => [r.id, r.raw_data]),
    );
    file.close();
    const missing = [...acknowledged].filter(([id, raw]) => stored.get(id) !== raw);
    expect(missing).toEqual([]);

    const second = await serve(['--port', '0', '--seed', seedFile('seed.json', SEED), '--db', db]);
    const again = device(second.url, A.key, A.token);
    const highest = Math.max(...acknowledged.keys());
    const last = (await again.lastFeeds('73,74')).json.payload as { id_resource_feed: number }[];
    expect(Math.max(...last.map((f) => f.id_resource_feed))).toBeGreaterThanOrEqual(highest);
    const created = await again.createFeed(73, 1);
    expect(created.json.payload.id_resource_feed).toBeGreaterThan(Math.max(...stored.keys()));
    expect((await again.getResource(73)).json.payload.id_device).toBe(1);

    // One service per file: a second one on the same database refuses to start.
    const third = await serve(['--port', '0', '--db', db], { mayExit: true });
    expect(await third.exited).toBe(1);
    expect(third.output()).toContain(`database ${db} is in use by another process`);
    expect(await second.stop()).toBe(0);
  });
});
