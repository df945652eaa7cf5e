// `feed-agent simulate` as a user runs it: the built CLI in a child process, against the local service in
// this process on 127.0.0.1 (or the demo service it starts itself). Delivery is checked in the service's
// database after it closed: every counter value, in order; commands once each; presence; exit codes.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { DEMO_PUBLIC_KEY, DEMO_TOKEN, startService } from '../../src/service';
import type { RunningService } from '../../src/service';
import { encodeCheckpoint, encodeSample } from '../../platforms/node/storage/log-record';
import { closedPort } from '../node/support/listen';
import { track } from '../support/children';
import { Served } from '../support/serve';
import { COUNTERS, counterConfig, DEVICE, deviceClient, deviceEnv, ROOT, runSim, SEED, SETPOINT, Sim, storedFeeds, summaryOf, withBuiltCli } from './support';

const work = withBuiltCli('e2e-simulate-');


async function service(name: string): Promise<{ service: RunningService; dbFile: string }> {
  const dbFile = join(work.dir, name + '.db');
  return { service: await startService({ seed: SEED, dbFile }), dbFile };
}

/** Feeds per counter resource, in the order the service stored them. */
function countersIn(dbFile: string): Map<number, number[]> {
  const out = new Map<number, number[]>(COUNTERS.map((id) => [id, []]));
  for (const feed of storedFeeds(dbFile)) out.get(feed.resource)?.push(Number(feed.value));
  return out;
}

describe('feed-agent simulate', () => {
  it('without a URL simulates the demo device of a local service and delivers everything', async () => {
    const { code, sim } = await runSim(work.cli(), ['--duration', '2', '--json']);
    expect(code).toBe(0);
    const start = sim.all('start')[0];
    expect(start.localService).toBe(true);
    expect(start.sensors.map((s: { resource: number; signal: string }) => [s.resource, s.signal])).toEqual([
      [101, 'square'],
      [102, 'sine'],
      [103, 'random-walk'],
      [104, 'random-walk'],
      [105, 'counter'],
    ]);
    expect(start.actuators.map((a: { resource: number }) => a.resource)).toEqual([107, 108]);
    expect(start.skipped).toEqual([expect.objectContaining({ resource: 106 })]);
    const summary = sim.all('summary')[0];
    expect(summary).toMatchObject({ ok: true, queued: 0, droppedOverflow: 0, rejectedInvalid: 0 });
    expect(summary.accepted).toBeGreaterThanOrEqual(5);
    expect(summary.sent).toBe(summary.accepted);
    expect(sim.stdout + sim.stderr).not.toContain(DEMO_TOKEN);
  });

  it('whose reader goes away (`simulate | head -3`) stops as at Ctrl-C: it drains and exits 0, without a stack', async () => {
    const sim = new Sim(work.cli(), []);
    await new Promise<void>((resolve) => sim.child.stdout!.once('data', () => resolve()));
    sim.child.stdout!.destroy();
    expect(await sim.exited).toBe(0);
    expect(sim.stderr).toContain('output closed: stopping');
    expect(sim.stderr).not.toMatch(/EPIPE|Unhandled|    at /);
  });

  it('--port and --host give the local service, and so its dashboard, a stable address', async () => {
    // A port free a moment ago (closedPort closes its server): the one the simulator is asked to listen on.
    const port = Number((await closedPort(createServer())).split(':').pop());
    const { code, sim } = await runSim(work.cli(), ['--port', String(port), '--host', '127.0.0.1', '--duration', '1', '--json']);
    expect(code, sim.stderr).toBe(0);
    expect(sim.all('start')[0]).toMatchObject({ url: `http://127.0.0.1:${port}`, dashboard: `http://127.0.0.1:${port}/`, localService: true });
    expect(sim.stderr).toBe('');
  });

  it('--devices N simulates the demo fleet of a service, one agent per device, and sums it in the status line', async () => {
    const dbFile = join(work.dir, 'fleet.db');
    const svc = await startService({ demoDevices: 4, dbFile });
    try {
      const { code, sim } = await runSim(work.cli(), ['--url', svc.url, '--devices', '3', '--duration', '2']);
      expect(code).toBe(0);
      expect(sim.stdout).toContain('feed-agent simulate: 3 devices of the demo fleet');
      const status = /devices 3 {2}queued 0 {2}sent (\d+) /.exec(sim.stdout);
      expect(status, sim.stdout).not.toBeNull();
      const summary = /^done in [\d.]+ s: accepted (\d+), refused before queuing 0, delivered (\d+), .*; every accepted sample was delivered or set aside$/m.exec(sim.stdout);
      expect(summary).not.toBeNull();
      await svc.close();
      // Every device fed its own five sensors, and the fourth device of the service nothing.
      const feeds = storedFeeds(dbFile);
      const fed = [...new Set(feeds.map((f) => f.resource))].sort((a, b) => a - b);
      expect(fed).toEqual([101, 102, 103, 104, 105, 201, 202, 203, 204, 205, 301, 302, 303, 304, 305]);
      expect(feeds.length).toBe(Number(summary![1]));
      expect(Number(status![1])).toBe(feeds.length);
    } finally {
      await svc.close();
    }

    // A fleet larger than the service's: bad input, and a hint.
    const small = await startService({ demoDevices: 2 });
    try {
      const { code, sim } = await runSim(work.cli(), ['--url', small.url, '--devices', '3', '--duration', '1']);
      expect(code).toBe(2);
      expect(sim.stderr).toMatch(/device 3: .*\(a fleet of 3 needs feed-agent serve --demo-devices 3 or more\)/);
    } finally {
      await small.close();
    }
  });

  it('delivers every counter value in order, runs each command once, and leaves the resources alive', async () => {
    const { service: svc, dbFile } = await service('complete');
    try {
      const config = counterConfig(work.dir, 'complete.json', 20, {
        actuators: [{ resource: SETPOINT, every: 100 }],
        uplink: { batch: 25, flushMs: 200 },
      });
      const sim = new Sim(work.cli(), ['--config', config, '--json'], deviceEnv(svc.url));
      await sim.next((e) => e.type === 'start');
      const client = deviceClient(svc.url);
      // A command is a feed written after the actuator's first poll, which only records the current state.
      // The service counts every operation that names the resource: the simulator's check of the config,
      // the agent's start-up lookup, then the polls.
      let ownReads = 0;
      const usage = async () => {
        const r = await client.getResource(SETPOINT, { auth: false, silent: true });
        return r.api_requests_usage - ++ownReads;
      };
      for (let i = 0; i < 200 && (await usage()) < 3; i++) await new Promise((r) => setTimeout(r, 50));
      const written: number[] = [];
      for (const value of [21.5, 18, 30]) {
        const feed = await client.createFeed(SETPOINT, value);
        written.push(feed.id_resource_feed);
        await sim.next((e) => e.type === 'command' && e.feed === feed.id_resource_feed);
      }
      // A few more polls, which must not run any command again.
      const polled = await usage();
      for (let i = 0; i < 200 && (await usage()) < polled + 3; i++) await new Promise((r) => setTimeout(r, 50));
      await sim.next((e) => e.type === 'status' && e.sent >= 100);
      sim.kill('SIGINT');
      expect(await sim.exited).toBe(0);

      expect(sim.all('command').map((e) => [e.resource, e.feed, e.value])).toEqual([
        [SETPOINT, written[0], 21.5],
        [SETPOINT, written[1], 18],
        [SETPOINT, written[2], 30],
      ]);
      const summary = sim.all('summary')[0];
      expect(summary).toMatchObject({ ok: true, queued: 0, ambiguous: 0 });
      for (const id of COUNTERS) {
        const r = await client.getResource(id, { auth: false, silent: true });
        expect(r.is_alive, 'resource ' + id + ' alive').toBe(true);
      }
      await svc.close();
      const stored = countersIn(dbFile);
      let total = 0;
      for (const [id, values] of stored) {
        expect(values.length, 'values of ' + id).toBeGreaterThan(10);
        expect(values, 'values of ' + id).toEqual(values.map((_, i) => i));
        total += values.length;
      }
      expect(total).toBe(summary.accepted);
      expect(sim.stdout + sim.stderr).not.toContain(DEVICE.token);
    } finally {
      await svc.close();
    }
  });

  it('on Ctrl-C stops sampling and drains what is queued before it exits', async () => {
    const { service: svc, dbFile } = await service('drain');
    try {
      // Nothing is sent on its own for minutes: only the stop can deliver.
      const config = counterConfig(work.dir, 'drain.json', 20, { uplink: { batch: 1000, flushMs: 600_000, maxLatencyMs: 600_000 } });
      const sim = new Sim(work.cli(), ['--config', config, '--json'], deviceEnv(svc.url));
      const before = await sim.next((e) => e.type === 'status' && e.queued >= 30);
      expect(before.sent).toBe(0);
      sim.kill('SIGINT');
      const stopping = await sim.next((e) => e.type === 'stopping');
      expect(stopping.queued).toBeGreaterThanOrEqual(30);
      expect(await sim.exited).toBe(0);
      const summary = sim.all('summary')[0];
      expect(summary).toMatchObject({ ok: true, queued: 0 });
      expect(summary.sent).toBe(summary.accepted);
      await svc.close();
      const stored = [...countersIn(dbFile).values()].flat();
      expect(stored.length).toBe(summary.accepted);
    } finally {
      await svc.close();
    }
  });

  it('at its defaults, delivers everything within seconds of a revoked token being restored (seed file and SIGUSR2)', async () => {
    const seedFile = join(work.dir, 'revoke-seed.json');
    const dbFile = join(work.dir, 'revoke.db');
    const device = SEED.devices[0];
    const writeSeed = (token: string) => writeFileSync(seedFile, JSON.stringify({ ...SEED, devices: [{ ...device, token }] }));
    writeSeed(device.token);
    const served = await Served.start(work.cli(), ['--port', '0', '--seed', seedFile, '--db', dbFile]);
    try {
      // No config: the counters read every second, every uplink setting the simulator's default.
      const sim = new Sim(work.cli(), ['--resources', COUNTERS.join(','), '--json'], deviceEnv(served.url));
      await sim.next((e) => e.type === 'status' && e.sent > 0);
      writeSeed('revoked-' + device.token);
      await served.reloadSeed(/^seed applied again/);
      const paused = await sim.next((e) => e.type === 'status' && e.authPaused === true);
      await sim.next((e) => e.type === 'status' && e.elapsedMs > paused.elapsedMs + 2_000 && e.queued > 0);
      writeSeed(device.token);
      await served.reloadSeed(/^seed applied again/);
      const restored = sim.all('status').pop()!;
      // Everything accepted while the token was refused is delivered within a refused token's retry (5 s)
      // and the longest a sample waits for a flush (5 s), with slack for a busy machine.
      const BOUND_MS = 15_000;
      const caughtUp = await sim.next((e) => e.type === 'status' && !e.authPaused && e.sent >= restored.accepted, BOUND_MS);
      expect(caughtUp.elapsedMs - restored.elapsedMs).toBeLessThan(BOUND_MS);
      sim.kill('SIGINT');
      expect(await sim.exited).toBe(0);
      const summary = sim.all('summary')[0];
      expect(summary).toMatchObject({ ok: true, queued: 0, droppedOverflow: 0, authPaused: false });
      await served.stop();
      expect(storedFeeds(dbFile).length).toBe(summary.accepted);
    } finally {
      await served.stop();
    }
  }, 60_000);

  it('exits 1 with the counts when the drain times out, and 130 at a second Ctrl-C', async () => {
    // Nothing listens there: every send fails and the queue cannot drain.
    const url = 'http://' + (await closedPort(createServer()));
    const config = counterConfig(work.dir, 'unreachable.json', 50);
    const timedOut = await runSim(work.cli(), ['--config', config, '--duration', '1', '--drain-timeout', '0.5'], deviceEnv(url));
    expect(timedOut.code).toBe(1);
    const last = timedOut.sim.stdout.trim().split('\n').pop()!;
    expect(last).toMatch(/^done in \d+\.\d s: accepted (\d+), refused before queuing 0, delivered 0, set aside 0, dropped 0, still queued \1; \1 samples were not delivered$/);

    const sim = new Sim(work.cli(), ['--config', config, '--json'], deviceEnv(url));
    await sim.next((e) => e.type === 'status' && e.queued > 0);
    sim.kill('SIGINT');
    await sim.next((e) => e.type === 'stopping');
    // Later than one keypress can arrive twice (below): a second press.
    await new Promise((r) => setTimeout(r, 700));
    sim.kill('SIGINT');
    expect(await sim.exited).toBe(130);
    expect(sim.all('interrupted')[0].queued).toBeGreaterThan(0);
    expect(sim.all('summary')).toEqual([]);
  });

  it('after a run that left samples in --durable, more than its queue in memory holds, the next one says how many it restored, and its counts add up', async () => {
    const durable = join(work.dir, 'restored-queue');
    // A queue of 16 in memory: the 60 samples the first run takes wait on disk beyond it.
    const config = counterConfig(work.dir, 'restored.json', 50, { uplink: { queue: 16 } });
    // Nothing listens there: the first run keeps everything it accepted in DIR.
    const down = 'http://' + (await closedPort(createServer()));
    const first = await runSim(work.cli(), ['--config', config, '--durable', durable, '--duration', '1', '--drain-timeout', '0.2', '--json'], deviceEnv(down));
    expect(first.code).toBe(1);
    const { queued: left, backlog, droppedOverflow } = summaryOf(first.sim, ['queued', 'backlog', 'droppedOverflow']);
    expect([left - backlog, droppedOverflow]).toEqual([16, 0]);
    expect(backlog).toBeGreaterThan(16);

    const { service: svc } = await service('restored');
    try {
      const { code, sim } = await runSim(work.cli(), ['--config', config, '--durable', durable, '--duration', '1'], deviceEnv(svc.url));
      expect(code, sim.stdout + sim.stderr).toBe(0);
      const lines = sim.stdout.trim().split('\n');
      expect(lines.at(-2)).toBe(`restored ${left} samples from ${durable}: accepted by an earlier run, not delivered before it ended`);
      const counts = /^done in [\d.]+ s: accepted (\d+) \+ restored (\d+), refused before queuing 0, delivered (\d+), set aside 0, dropped 0, still queued 0; every accepted sample was delivered or set aside$/.exec(lines.at(-1)!);
      expect(counts, lines.at(-1)).not.toBeNull();
      const [accepted, restored, delivered] = counts!.slice(1).map(Number);
      expect(restored).toBe(left);
      expect(accepted + restored).toBe(delivered);
    } finally {
      await svc.close();
    }
  });

  it('with --ages, stores a backlog an earlier run left in --durable at the times it was sampled, not when it arrived', async () => {
    const durable = join(work.dir, 'ages-queue');
    const config = counterConfig(work.dir, 'ages.json', 100, { uplink: { queue: 16 } });
    const down = 'http://' + (await closedPort(createServer()));
    const sampledFrom = Date.now();
    const first = await runSim(work.cli(), ['--config', config, '--durable', durable, '--ages', '--duration', '2', '--drain-timeout', '0.2', '--json'], deviceEnv(down));
    const sampledTo = Date.now();
    expect(first.code).toBe(1);
    // The highest value of each counter the first run accepted: 0 to it waited in DIR.
    const highest = JSON.parse(readFileSync(join(durable, 'counters.json'), 'utf8')) as Record<string, number>;
    // Seconds between sampling and arrival, so that a time of arrival cannot pass for one of sampling.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const { service: svc, dbFile } = await service('ages');
    const restartedAt = Date.now();
    try {
      const { code, sim } = await runSim(work.cli(), ['--config', config, '--durable', durable, '--ages', '--duration', '1', '--json'], deviceEnv(svc.url));
      expect(code, sim.stdout + sim.stderr).toBe(0);
      expect(summaryOf(sim, ['undated']).undated).toBe(0);
    } finally {
      await svc.close();
    }
    const db = new Database(dbFile, { readonly: true });
    try {
      for (const resource of COUNTERS) {
        const rows = db.prepare('SELECT raw_data AS value, created_at FROM feeds WHERE id_resource = ? ORDER BY id_resource_feed').all(resource) as { value: string; created_at: string }[];
        const at = rows.map((r) => ({ value: Number(r.value), ms: Date.parse(r.created_at.replace(' ', 'T') + 'Z') }));
        const earlier = at.filter((r) => r.value <= highest[resource]);
        expect(earlier.map((r) => r.value)).toEqual(Array.from({ length: highest[resource] + 1 }, (_, i) => i));
        // Stored to the second below the time of sampling.
        for (const r of earlier) expect([r.value, r.ms >= Math.floor(sampledFrom / 1000) * 1000 && r.ms <= sampledTo]).toEqual([r.value, true]);
        for (const r of at.filter((x) => x.value > highest[resource])) expect(r.ms).toBeGreaterThanOrEqual(Math.floor(restartedAt / 1000) * 1000);
        // Per resource, in the order sampled.
        expect(at.map((r) => r.ms)).toEqual(at.map((r) => r.ms).sort((a, b) => a - b));
      }
    } finally {
      db.close();
    }
  });

  it('counts the samples an earlier version left in --durable without a time as undated, and delivers them', async () => {
    const durable = join(work.dir, 'undated-queue');
    // The log as the durable queue wrote it before samples kept their times: no "t", no "w".
    mkdirSync(join(durable, 'queue'), { recursive: true });
    const old = [encodeCheckpoint(0, 1), ...[0, 1, 2].map((v, i) => encodeSample(i + 1, COUNTERS[0], v))];
    writeFileSync(join(durable, 'queue', 'seg-0000000000000001.log'), Buffer.concat(old));
    const { service: svc, dbFile } = await service('undated');
    try {
      const config = counterConfig(work.dir, 'undated.json', 200);
      const { code, sim } = await runSim(work.cli(), ['--config', config, '--durable', durable, '--duration', '0.5', '--json'], deviceEnv(svc.url));
      expect(code, sim.stdout + sim.stderr).toBe(0);
      expect(summaryOf(sim, ['undated', 'restored'])).toEqual({ undated: 3, restored: 3 });
    } finally {
      await svc.close();
    }
    // The ledger saw them: the counter went on after 2.
    expect(countersIn(dbFile).get(COUNTERS[0])!.slice(0, 4)).toEqual([0, 1, 2, 3]);
  });

  it('with nothing queued, oldestAgeMs is null, not a number standing for none', async () => {
    const { code, sim } = await runSim(work.cli(), ['--duration', '1', '--json']);
    expect(code).toBe(0);
    const summary = summaryOf(sim, ['queued', 'oldestAgeMs', 'restored']);
    expect(summary).toEqual({ queued: 0, oldestAgeMs: null, restored: 0 });
  });

  it('after `npm start` and one Ctrl-C, the shell sees the simulator\'s own exit status, 0 when all was delivered', async () => {
    // The repository's start script, run by npm in a project whose dist/ is this build; Ctrl-C as a
    // terminal sends it, to the whole process group: npm, its shell and the simulator.
    const app = join(work.dir, 'app');
    mkdirSync(app);
    symlinkSync(dirname(work.cli()), join(app, 'dist'));
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, scripts: { start: scripts.start } }));
    const npm = track(spawn('npm', ['start', '--silent', '--', '--json'], { cwd: app, detached: true, stdio: ['ignore', 'pipe', 'pipe'] }));
    let out = '';
    npm.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    npm.stderr!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const exited = new Promise<number | null>((resolve) => npm.on('close', (code) => resolve(code)));
    try {
      for (let i = 0; i < 300 && !/"type":"status".*"sent":[1-9]/.test(out); i++) await new Promise((r) => setTimeout(r, 50));
      process.kill(-npm.pid!, 'SIGINT');
      expect(await exited, out).toBe(0);
      expect(out).toMatch(/"type":"summary","ok":true/);
      expect(out).not.toContain('"type":"interrupted"');
    } finally {
      // Its group, should anything be left of it (the simulator is npm's grandchild); gone when all went well.
      try {
        process.kill(-npm.pid!, 'SIGKILL');
      } catch {
        // ESRCH: nothing left.
      }
    }
  });

  it("runs docs/simulator.md's config example against the demo device, without the url, key and token that point it at `feed-agent serve`, as the doc says", async () => {
    const doc = readFileSync(join(ROOT, 'docs', 'simulator.md'), 'utf8');
    const written = JSON.parse(/## The config file\n[\s\S]*?```json\n([\s\S]*?)```/.exec(doc)![1]) as Record<string, unknown>;
    const { url, publicKey, token, ...rest } = written;
    expect([url, publicKey, token].every((v) => typeof v === 'string')).toBe(true);
    const example = JSON.stringify(rest);
    const file = join(work.dir, 'doc-config.json');
    writeFileSync(file, example);
    const { code, sim } = await runSim(work.cli(), ['--config', file, '--duration', '2', '--json']);
    expect(code, sim.stdout + sim.stderr).toBe(0);
    const start = sim.all('start')[0];
    // Its sensors, then the resources named without one, which get the signal their subtype suggests.
    const { sensors, resources = [] } = rest as { sensors: { resource: number }[]; resources?: number[] };
    const configured = [...sensors.map((s) => s.resource), ...resources];
    expect(start.sensors.map((s: { resource: number }) => s.resource)).toEqual(configured);
    expect(start.sensors.every((s: { name: string }) => s.name !== '')).toBe(true);
    expect(start.refused).toEqual([]);
    expect(summaryOf(sim, ['ok', 'accepted', 'sent', 'rejectedInvalid'])).toMatchObject({ ok: true, rejectedInvalid: 0 });
    expect(sim.all('summary')[0].sent).toBe(sim.all('summary')[0].accepted);
  });

  it('says at start which configured readings the resource would refuse; a run where every one was refused exits 1', async () => {
    const config = (name: string, sensors: object[]) => {
      const file = join(work.dir, name);
      writeFileSync(file, JSON.stringify({ sensors }));
      return file;
    };
    const tooHot = { resource: 102, every: 200, signal: 'sine', min: 130, max: 200 };
    const refused = await runSim(work.cli(), ['--config', config('too-hot.json', [tooHot]), '--duration', '1.5']);
    expect(refused.code).toBe(1);
    expect(refused.sim.stdout).toContain(
      "  refused   102 Air Temperature    every reading: the signal's 130..200 lies outside the resource's -40..125\n",
    );
    expect(refused.sim.stdout).toMatch(
      /^done in [\d.]+ s: accepted 0, refused before queuing [1-9]\d*, delivered 0, .*; every reading was refused before queuing: nothing to deliver/m,
    );

    // One signal refused in part and one in full beside a good one: listed, counted, and the run succeeds.
    const mixed = [
      tooHot,
      { resource: 104, every: 200, signal: 'random', min: 50, max: 150 },
      { resource: 106, every: 200, signal: 'constant', value: 'on' },
    ];
    const { code, sim } = await runSim(work.cli(), ['--config', config('mixed.json', mixed), '--duration', '1.5', '--json']);
    expect(code).toBe(0);
    expect(sim.all('start')[0].refused).toEqual([
      { resource: 102, name: 'Air Temperature', all: true, reason: "every reading: the signal's 130..200 lies outside the resource's -40..125" },
      { resource: 104, name: 'Soil Moisture', all: false, reason: "those above 100: the signal's 50..150 goes beyond the resource's 0..100" },
    ]);
    const summary = summaryOf(sim, ['ok', 'accepted', 'sent', 'rejectedInvalid']);
    expect(summary.ok).toBe(true);
    expect(summary.rejectedInvalid).toBeGreaterThan(0);
    expect(summary.sent).toBe(summary.accepted);
  });

  it('says in words that a service at an https:// URL did not speak TLS, not in OpenSSL\'s', async () => {
    const svc = await startService();
    try {
      const url = svc.url.replace('http://', 'https://');
      const { code, sim } = await runSim(work.cli(), ['--url', url, '--key', DEMO_PUBLIC_KEY, '--token', DEMO_TOKEN, '--resources', '101', '--duration', '1']);
      expect(code).toBe(1);
      expect(sim.stderr).toMatch(/: the server did not speak TLS \(is it plain http:\/\/, not https:\/\/\?\)\n$/);
      expect(sim.stderr).not.toMatch(/ssl3|SSL routines|openssl/);
    } finally {
      await svc.close();
    }
  });

  describe('bad input: one line on stderr, exit 2, the token never shown', () => {
    const secret = 'do-not-print-this-token-42';
    const cases: [string, string[], Record<string, string>, RegExp][] = [
      ['an unknown flag', ['--bogus'], {}, /^feed-agent simulate: unknown option --bogus \(see feed-agent simulate --help\)\n$/],
      ['a flag without its value', ['--duration'], {}, /--duration needs a value/],
      ['a positional argument', ['now'], {}, /unexpected argument/],
      // A value that starts with a dash is still the option's value, and what is wrong with it is said.
      ['a negative duration', ['--duration', '-1'], {}, /--duration must be a number of seconds above 0, got "-1"\n$/],
      ['a negative drain timeout', ['--drain-timeout', '-0.5'], {}, /--drain-timeout must be a number of seconds above 0, got "-0.5"\n$/],
      ['a negative fleet', ['--devices', '-2'], {}, /--devices must be an integer from 1 to 100000, got "-2"\n$/],
      ['a negative --auth-retry', ['--auth-retry', '-10'], {}, /--auth-retry must be a whole number of milliseconds above 0, got "-10"\n$/],
      ['a flag followed by another', ['--duration', '--json'], {}, /--duration needs a value: it is followed by an option \(a value that starts with "-" is written --duration=VALUE\)/],
      ['a duration that is not a number', ['--duration', 'soon'], {}, /--duration must be a number of seconds above 0, got "soon"/],
      ['a URL on a port fetch refuses', ['--url', 'http://127.0.0.1:6000', '--key', 'K', '--token', secret], {}, /--url: browsers and fetch refuse to connect to port 6000/],
      ['a bad --auth-retry', ['--auth-retry', '1.5'], {}, /--auth-retry must be a whole number of milliseconds above 0, got "1.5"/],
      ['a URL that is not http', ['--url', 'ftp://127.0.0.1/', '--key', 'K', '--token', secret], {}, /--url must be an http:\/\/ or https:\/\/ URL/],
      ['a bad URL from the environment', [], { FEED_AGENT_URL: 'localhost', FEED_AGENT_PUBLIC_KEY: 'K', FEED_AGENT_TOKEN: secret }, /FEED_AGENT_URL must be/],
      ['a URL without a token', ['--url', 'http://127.0.0.1:8', '--key', 'K'], {}, /a token is needed with a URL/],
      ['a URL without a key', ['--url', 'http://127.0.0.1:8', '--token', secret], {}, /a public key is needed with a URL/],
      ['a token without a URL', ['--token', secret], {}, /--token is given but no URL/],
      ['a bad resource list', ['--resources', '73,x'], {}, /--resources must be resource ids separated by commas/],
      ['a missing config file', ['--config', 'no-such-file.json'], {}, /cannot read the config no-such-file\.json: ENOENT/],
      ['a resource the device does not have', ['--resources', '999', '--duration', '1'], {}, /cannot read resources 999/],
      // procfs answers ENOENT to a mkdir under it, which sent Node's recursive mkdir round forever at 100 % CPU.
      ['a --durable directory that cannot be made (procfs)', ['--durable', '/proc/no-such-dir', '--duration', '1'], {}, /--durable \/proc\/no-such-dir: ENOENT: no such file or directory, mkdir '\/proc\/no-such-dir'\n$/],
      ['a --durable directory under a file', ['--durable', 'package.json/queue', '--duration', '1'], {}, /--durable package\.json\/queue: ENOTDIR/],
      ['a CA file that cannot be read', ['--ca', 'no-such-ca.pem', '--duration', '1'], {}, /--ca no-such-ca\.pem: ENOENT/],
      ['--port with a URL, where no local service is started', ['--url', 'http://127.0.0.1:8', '--key', 'K', '--token', secret, '--port', '8080'], {}, /--port: only for the local service, which is not started when a URL is given\n$/],
      ['a --port fetch refuses', ['--port', '6000'], {}, /--port: browsers and fetch refuse to connect to port 6000/],
      ['the demo off loopback', ['--host', '0.0.0.0'], {}, /refusing to serve the demo devices off loopback: .* or --allow-demo-token to serve the demo there anyway\n$/],
      ['a fleet of no device', ['--devices', '0'], {}, /--devices must be an integer from 1 to 100000, got "0"/],
      ['a fleet with a token', ['--devices', '2', '--token', secret], {}, /--devices simulates the demo fleet as it is, .*: not with --token\n$/],
      ['a fleet with resources', ['--devices', '2', '--resources', '101'], {}, /not with --resources\n$/],
    ];
    it.each(cases)('%s', async (_name, args, extraEnv, pattern) => {
      const { code, sim } = await runSim(work.cli(), args, extraEnv);
      expect(code).toBe(2);
      expect(sim.stdout).toBe('');
      expect(sim.stderr).toMatch(pattern);
      expect(sim.stderr.trim().split('\n')).toHaveLength(1);
      expect(sim.stderr).not.toContain(secret);
    });

    it('nothing to simulate, whether nothing was named or everything named was skipped', async () => {
      const empty = join(work.dir, 'empty.json');
      writeFileSync(empty, '{}');
      const none = await runSim(work.cli(), ['--config', empty]);
      expect(none.code).toBe(2);
      expect(none.sim.stderr).toMatch(/^feed-agent simulate: nothing to simulate: name the resources/);
      // 106 has a pattern, for which no signal is chosen: it is skipped, and nothing is left.
      const svc = await startService();
      try {
        const { code, sim } = await runSim(work.cli(), ['--url', svc.url, '--key', DEMO_PUBLIC_KEY, '--token', DEMO_TOKEN, '--resources', '106', '--duration', '1']);
        expect(code).toBe(2);
        expect(sim.stdout).toBe('');
        expect(sim.stderr).toBe(
          'feed-agent simulate: nothing to simulate: every resource named was skipped (106 Circulation Fan: its values must match the pattern on|off; ' +
            'no signal is chosen for a pattern (a "constant" sensor in --config can feed it))\n',
        );
      } finally {
        await svc.close();
      }
    });

    it('a config with unknown keys and bad values names each of them', async () => {
      const file = join(work.dir, 'bad.json');
      writeFileSync(file, JSON.stringify({ token: secret, sensors: [{ resource: 105, every: 100, signal: 'counter', colour: 'red' }], uplink: { size: 4, sendAge: 'yes' } }));
      const { code, sim } = await runSim(work.cli(), ['--config', file]);
      expect(code).toBe(2);
      expect(sim.stderr.trim()).toBe(
        `feed-agent simulate: ${file}: sensors[0].colour: unknown key for the counter signal; uplink.size: unknown key; uplink.sendAge: expected true or false, got "yes"`,
      );
      expect(sim.stdout).toBe('');
    });

    it("an uplink setting out of range is refused by the agent's own check", async () => {
      const file = join(work.dir, 'batch.json');
      writeFileSync(file, JSON.stringify({ sensors: [{ resource: 105, every: 100, signal: 'counter' }], uplink: { batch: 5000 } }));
      const { code, sim } = await runSim(work.cli(), ['--config', file]);
      expect(code).toBe(2);
      expect(sim.stderr).toMatch(/uplink\.batch: expected at most 1000, got 5000/);
    });
  });
});
