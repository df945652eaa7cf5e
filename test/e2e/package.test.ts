// The library as a gateway gets it: the package packed with `npm pack` (so "files" must hold what
// "exports" names), installed into a consumer, imported as `feed-agent` and `feed-agent/node`, type-checked
// by a strict NodeNext project, and the gateway example run from it: several devices in one process.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildInto, ROOT, workDir } from './support';

const work = workDir('e2e-package-');
const consumer = join(work.dir, 'consumer');
const installed = join(consumer, 'node_modules', 'feed-agent');

beforeAll(() => {
  const staged = join(work.dir, 'staged');
  buildInto(join(staged, 'dist'), true);
  cpSync(join(ROOT, 'package.json'), join(staged, 'package.json'));
  cpSync(join(ROOT, 'examples'), join(staged, 'examples'), { recursive: true });
  // Built above: a prepare or prepack script would look for the sources, which are not staged.
  execFileSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', work.dir], { cwd: staged, stdio: 'ignore' });
  const tarball = readdirSync(work.dir).find((name) => name.endsWith('.tgz'))!;
  mkdirSync(installed, { recursive: true });
  execFileSync('tar', ['-xzf', join(work.dir, tarball), '-C', installed, '--strip-components=1']);
  // Its own package scope: without it, Node would resolve `feed-agent` as this repository's self-reference.
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
}, 120_000);
afterAll(work.remove);

it('imports and runs from a consumer: one agent per device in one process', () => {
  writeFileSync(
    join(consumer, 'consumer.mjs'),
    `import { createAgent, FeedClient } from 'feed-agent';
import { createNodeHost, openDurableQueue } from 'feed-agent/node';
const agent = createAgent(createNodeHost(), { url: 'http://127.0.0.1:9', publicKey: 'K', token: 'T' });
console.log(JSON.stringify({ queued: agent.stats().queued, client: typeof FeedClient, queue: typeof openDurableQueue }));
`,
  );
  expect(JSON.parse(execFileSync(process.execPath, ['consumer.mjs'], { cwd: consumer, encoding: 'utf8' }))).toEqual({
    queued: 0,
    client: 'function',
    queue: 'function',
  });

  const out = execFileSync(process.execPath, [join(installed, 'examples', 'gateway.mjs'), '2'], { cwd: consumer, encoding: 'utf8' });
  const summaries = out.split('\n').filter((line) => / still queued /.test(line));
  expect(summaries).toHaveLength(3);
  for (const line of summaries) {
    const [, accepted, delivered, queued] = /accepted (\d+), delivered (\d+), still queued (\d+)/.exec(line)!.map(Number);
    expect(accepted).toBeGreaterThan(0);
    expect(delivered).toBe(accepted);
    expect(queued).toBe(0);
  }
});

it('type-checks from a strict NodeNext project', () => {
  writeFileSync(
    join(consumer, 'consumer.ts'),
    `import { createAgent } from 'feed-agent';
import type { AgentConfig, AgentStats } from 'feed-agent';
import { createNodeHost, openDurableQueue } from 'feed-agent/node';
import type { DurableQueueStats } from 'feed-agent/node';

const config: AgentConfig = {
  url: 'http://127.0.0.1:9',
  publicKey: 'K',
  token: 'T',
  sensors: [{ resource: 1, every: 1000, read: () => 21.5 }],
};
const agent = createAgent(createNodeHost({ storage: openDurableQueue('q') }), config);
const stats: AgentStats = agent.stats();
const queued: number = stats.queued;
const queueStats: DurableQueueStats | null = null;
// @ts-expect-error a config needs its token: were the types missing (any), this line would be an error
createAgent(createNodeHost(), { url: 'http://127.0.0.1:9', publicKey: 'K' });
export { queued, queueStats };
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
  let output = '';
  try {
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: consumer, encoding: 'utf8' });
  } catch (e) {
    output = (e as { stdout: string }).stdout;
  }
  expect(output).toBe('');
});
