// The library as a project gets it: the package packed with `npm pack` (so "files" must hold what
// "exports" names) and installed with `npm install` into a fresh project outside this repository. The
// install builds no native code (SQLite is an optional peer, needed only by the local service); the
// project imports `feed-agent`, `feed-agent/node`, `feed-agent/service` and `feed-agent/gateway`,
// type-checks them under strict NodeNext, is told by name what the service and the gateway lack, and once better-sqlite3 is there runs the service
// and the gateway example from it; a program that only starts an agent keeps running until stop().
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEMO_PUBLIC_KEY, DEMO_TOKEN, startService } from '../../src/service';
import { closedPort } from '../node/support/listen';
import { track } from '../support/children';
import { ROOT, workDir } from './support';

const work = workDir('e2e-package-');
// Outside the repository: nothing of its node_modules may be found by walking up.
const consumer = mkdtempSync(join(tmpdir(), 'feed-agent-consumer-'));
const installed = join(consumer, 'node_modules', 'feed-agent');
/** What npm install printed on stderr. */
let installWarnings = '';

beforeAll(() => {
  const staged = join(work.dir, 'staged');
  // The build the e2e project made once, type declarations included.
  cpSync(inject('built'), join(staged, 'dist'), { recursive: true });
  // What "files" names (dist copied above), and the README and licence that npm always ships.
  const { files } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { files: string[] };
  for (const entry of [...files.filter((f) => f !== 'dist'), 'package.json', 'README.md', 'LICENSE']) {
    if (existsSync(join(ROOT, entry))) cpSync(join(ROOT, entry), join(staged, entry), { recursive: true });
  }
  // Built above: no prepack, which would build the type declarations again.
  execFileSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', work.dir], { cwd: staged, stdio: 'ignore' });
  const tarball = readdirSync(work.dir).find((name) => name.endsWith('.tgz'))!;
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  const install = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(work.dir, tarball)], { cwd: consumer, encoding: 'utf8' });
  if (install.status !== 0) throw new Error('npm install failed:\n' + install.stderr);
  installWarnings = install.stderr;
}, 300_000);
afterAll(() => {
  work.remove();
  rmSync(consumer, { recursive: true, force: true });
});

/** Runs `node SCRIPT` in the consumer project; its exit status and output. */
function node(args: string[], timeout = 30_000) {
  return spawnSync(process.execPath, args, { cwd: consumer, encoding: 'utf8', timeout });
}

/** Every file under `dir` whose name passes `test`, as paths relative to it. */
function filesUnder(dir: string, test: (name: string) => boolean): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((path) => test(path.split('/').pop()!));
}

describe('the package', () => {
  it('runs no script when installed (it is built before packing), and says nothing about scripts', () => {
    const { scripts } = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    // A clone's dist/ is built by the bin itself (platforms/node/bin.mjs), not by an install script.
    expect(Object.keys(scripts).filter((name) => /^(pre|post)?install$|^prepare$/.test(name))).toEqual([]);
    expect(scripts.prepack).toBe('node scripts/build.mjs');
    expect(installWarnings).not.toMatch(/install-scripts|prepare/);
  });

  it('ships its MIT licence, and every file of docs/ that the README links to', () => {
    expect(readFileSync(join(installed, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} the feed-agent authors\n/);
    const readme = readFileSync(join(installed, 'README.md'), 'utf8');
    const linked = [...new Set([...readme.matchAll(/\]\((docs\/[^)#\s]+)/g)].map((m) => m[1]))];
    expect(linked.length).toBeGreaterThan(5);
    expect(linked.filter((path) => !existsSync(join(installed, path)))).toEqual([]);
  });
});

describe('a clone of the repository', () => {
  it("runs the README's `npx feed-agent` before any build: the bin builds dist/ first", () => {
    const clone = join(work.dir, 'clone');
    for (const entry of ['package.json', 'tsconfig.json', 'scripts', 'src', 'platforms']) cpSync(join(ROOT, entry), join(clone, entry), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
    const { bin, version } = JSON.parse(readFileSync(join(clone, 'package.json'), 'utf8')) as { bin: Record<string, string>; version: string };
    expect(existsSync(join(clone, 'dist'))).toBe(false);
    expect(execFileSync(join(clone, bin['feed-agent']), ['--version'], { encoding: 'utf8' })).toBe(version + '\n');
    expect(existsSync(join(clone, 'dist', 'cli.js'))).toBe(true);
  });
});

describe('without better-sqlite3 (a project that runs agents)', () => {
  it('installs no native code: no SQLite, no compiled addon, no build files', () => {
    const modules = join(consumer, 'node_modules');
    expect(readdirSync(modules).filter((name) => !name.startsWith('.')).sort()).toEqual(['feed-agent', 'undici', 'uplot']);
    expect(filesUnder(modules, (name) => name.endsWith('.node') || name === 'binding.gyp' || name === 'Makefile')).toEqual([]);
  });

  it('imports feed-agent, feed-agent/node, and feed-agent/service and feed-agent/gateway, which ask for better-sqlite3 and mqtt by name', () => {
    writeFileSync(
      join(consumer, 'imports.mjs'),
      `import { createAgent, FeedClient } from 'feed-agent';
import { createNodeHost, openDurableQueue } from 'feed-agent/node';
import { startService } from 'feed-agent/service';
import { parseGatewayConfig, startGateway } from 'feed-agent/gateway';
const agent = createAgent(createNodeHost(), { url: 'http://127.0.0.1:8', publicKey: 'K', token: 'T' });
const service = await startService().then(() => 'started', (e) => e.message);
const gatewayConfig = parseGatewayConfig({ service: { url: 'http://127.0.0.1:8' }, queue: { dir: 'q' }, mqtt: { url: 'mqtt://127.0.0.1:9' }, metrics: false,
  devices: [{ publicKey: 'K', tokenEnv: 'T', resources: [{ id: 1, mqtt: { topic: 't' } }] }] }, { T: 'token' }, process.cwd());
const gateway = await startGateway(gatewayConfig).then(() => 'started', (e) => e.message);
console.log(JSON.stringify({ queued: agent.stats().queued, client: typeof FeedClient, queue: typeof openDurableQueue, service, gateway }));
`,
    );
    const run = node(['imports.mjs']);
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      queued: 0,
      client: 'function',
      queue: 'function',
      service:
        'the local service keeps its data in SQLite through the package better-sqlite3, which is not installed: npm install better-sqlite3 (an agent alone never needs it)',
      gateway: 'this config needs mqtt, not installed: npm install mqtt',
    });

    const serve = node([join(consumer, 'node_modules', '.bin', 'feed-agent'), 'serve', '--port', '0']);
    expect(serve.status).toBe(1);
    expect(serve.stderr).toMatch(/^feed-agent serve: the local service keeps its data in SQLite through the package better-sqlite3, which is not installed: npm install better-sqlite3/m);
  });

  it('the gateway example says only what is missing, and exits 1', () => {
    const run = node([join(installed, 'examples', 'gateway.mjs'), '3']);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      'feed-agent serve: the local service keeps its data in SQLite through the package better-sqlite3, which is not installed: npm install better-sqlite3 (an agent alone never needs it)\n',
    );
  });

  it('type-checks from a strict NodeNext project, the service and the gateway included', () => {
    writeFileSync(
      join(consumer, 'consumer.ts'),
      `import { createAgent } from 'feed-agent';
import type { AgentConfig, AgentStats } from 'feed-agent';
import { createNodeHost, openDurableQueue } from 'feed-agent/node';
import type { DurableQueueStats } from 'feed-agent/node';
import { startService } from 'feed-agent/service';
import type { RunningService } from 'feed-agent/service';
import { parseGatewayConfig } from 'feed-agent/gateway';
import type { GatewayConfig, GatewayStats } from 'feed-agent/gateway';

const gatewayConfig: GatewayConfig = parseGatewayConfig({}, process.env, '.');
const gatewayStats: GatewayStats | null = null;
const config: AgentConfig = {
  url: 'http://127.0.0.1:8',
  publicKey: 'K',
  token: 'T',
  sensors: [{ resource: 1, every: 1000, read: () => 21.5 }],
};
const agent = createAgent(createNodeHost({ storage: openDurableQueue('q'), holdProcess: false }), config);
const stats: AgentStats = agent.stats();
const queued: number = stats.queued;
const queueStats: DurableQueueStats | null = null;
const service: Promise<RunningService> = startService({ port: 0 });
// @ts-expect-error a config needs its token: were the types missing (any), this line would be an error
createAgent(createNodeHost(), { url: 'http://127.0.0.1:8', publicKey: 'K' });
export { queued, queueStats, service, gatewayConfig, gatewayStats };
`,
    );
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          lib: ['es2022'],
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          noEmit: true,
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules', '@types')],
        },
        files: ['consumer.ts'],
      }),
    );
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const run = node([tsc, '-p', 'tsconfig.json'], 120_000);
    expect(run.stdout + run.stderr).toBe('');
  });
});

describe('with better-sqlite3 installed beside it', () => {
  beforeAll(() => {
    // As `npm install better-sqlite3` would leave it, without building SQLite once more: this repository's.
    symlinkSync(join(ROOT, 'node_modules', 'better-sqlite3'), join(consumer, 'node_modules', 'better-sqlite3'));
  });

  it('starts the service from feed-agent/service, and runs the gateway example: one agent per device in one process', () => {
    writeFileSync(
      join(consumer, 'service.mjs'),
      `import { startService } from 'feed-agent/service';
const service = await startService();
const answer = await fetch(service.url + '/api/device/' + service.demo.publicKey + '/resource/101');
await service.close();
console.log(answer.status);
`,
    );
    expect(node(['service.mjs'])).toMatchObject({ status: 0, stdout: '200\n' });

    const run = node([join(installed, 'examples', 'gateway.mjs'), '2'], 60_000);
    expect(run.status, run.stderr).toBe(0);
    const summaries = run.stdout.split('\n').filter((line) => / still queued /.test(line));
    expect(summaries).toHaveLength(3);
    for (const line of summaries) {
      const [, accepted, delivered, queued] = /accepted (\d+), delivered (\d+), still queued (\d+)/.exec(line)!.map(Number);
      expect(accepted).toBeGreaterThan(0);
      expect(delivered).toBe(accepted);
      expect(queued).toBe(0);
    }
  });
});

describe('a program that passes no log', () => {
  // The README's snippet without its `log`, against a service that is down: a flush every 100 ms, each failing.
  // It stops once five batches have failed (the lookup fails beside them, on its own ladder).
  const program = `import { createAgent } from 'feed-agent';
import { createNodeHost } from 'feed-agent/node';
const agent = createAgent(createNodeHost(), {
  url: process.env.URL, publicKey: '${DEMO_PUBLIC_KEY}', token: '${DEMO_TOKEN}',
  sensors: [{ resource: 104, every: 50, read: () => 50 }],
  uplink: { flushMs: 100, backoffBaseMs: 50, backoffCapMs: 100, startJitterMs: 0 },
});
await agent.start();
const failed = setInterval(() => {
  if (agent.stats().retries < 5) return;
  clearInterval(failed);
  void agent.stop({ flush: false }).then((s) => console.log('requests ' + s.requests + ', last error: ' + s.lastError));
}, 20);
`;

  async function run(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
    writeFileSync(join(consumer, 'no-log.mjs'), program);
    const url = 'http://' + (await closedPort(createServer()));
    const child = track(spawn(process.execPath, ['no-log.mjs'], { cwd: consumer, env: { ...process.env, URL: url, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    return { code, stdout, stderr };
  }

  it('hears of a failure once per kind, as a process warning that says how to see every line', async () => {
    const { code, stdout, stderr } = await run({ NODE_DEBUG: '' });
    expect(code).toBe(0);
    // Several failed requests, one warning for them all.
    expect(Number(/^requests (\d+)/.exec(stdout)?.[1])).toBeGreaterThanOrEqual(5);
    expect(stderr.match(/\[FEED_AGENT_WARNING\] FeedAgentWarning: warn: uplink: failing: network error on POST .*ECONNREFUSED/g), stderr).toHaveLength(1);
    expect(stderr).toContain('pass `log` to createNodeHost() for every line, or run with NODE_DEBUG=feed-agent');
    expect(stderr).not.toContain(DEMO_TOKEN);
  });

  it('with NODE_DEBUG=feed-agent, prints every log line of the agent, as Node\'s own modules do', async () => {
    const { code, stdout, stderr } = await run({ NODE_DEBUG: 'feed-agent' });
    expect(Number(/^requests (\d+)/.exec(stdout)?.[1])).toBeGreaterThanOrEqual(5);
    expect(code).toBe(0);
    // The first failure at warn, each try after it at debug (the endpoint's state is said once).
    expect(stderr.match(/^FEED-AGENT \d+: warn: uplink: failing: network error on POST .*ECONNREFUSED/gm), stderr).toHaveLength(1);
    expect(stderr.match(/^FEED-AGENT \d+: debug: uplink: network error on POST .*ECONNREFUSED/gm)!.length).toBeGreaterThan(1);
    expect(stderr).not.toContain('FeedAgentWarning');
    expect(stderr).not.toContain(DEMO_TOKEN);
  });
});

describe('holding the process', () => {
  // A program that only starts an agent: a reading every 100 ms, and it stops the agent after the 10th.
  const program = (hostOptions: string) => `import { createAgent } from 'feed-agent';
import { createNodeHost } from 'feed-agent/node';
let reads = 0;
const agent = createAgent(createNodeHost(${hostOptions}), {
  url: process.env.URL, publicKey: '${DEMO_PUBLIC_KEY}', token: '${DEMO_TOKEN}',
  sensors: [{ resource: 104, every: 100, read: () => {
    if (++reads === 10) void agent.stop().then((s) => console.log('stopped: accepted ' + s.accepted + ', sent ' + s.sent));
    return 50;
  } }],
  uplink: { flushMs: 200 },
});
await agent.start();
console.log('started');
`;

  async function run(name: string, hostOptions: string): Promise<{ code: number | null; out: string; ms: number }> {
    const service = await startService();
    try {
      writeFileSync(join(consumer, name), program(hostOptions));
      const started = performance.now();
      const child = track(spawn(process.execPath, [name], { cwd: consumer, env: { ...process.env, URL: service.url }, stdio: ['ignore', 'pipe', 'pipe'] }));
      let out = '';
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      clearTimeout(timer);
      return { code, out, ms: performance.now() - started };
    } finally {
      await service.close();
    }
  }

  it('holds the process while the agent runs, and stop() lets it exit once all is delivered', async () => {
    const { code, out } = await run('holding.mjs', '');
    // Killed after 20 s (code null) if stop() had left anything holding the process.
    expect(code, out).toBe(0);
    expect(out).toMatch(/^started\nstopped: accepted (\d+), sent \1\n$/);
  });

  it('with holdProcess: false, leaves the process to the application: it ends after start()', async () => {
    const { code, out } = await run('not-holding.mjs', '{ holdProcess: false }');
    expect(code).toBe(0);
    expect(out).toBe('started\n');
  });
});
