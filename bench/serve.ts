// `feed-agent serve` in a child process, as users run it: the benchmarks that need the local service
// start it here, so it has a core of its own and its CPU is not counted as the client's.
import { execFileSync, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';

export interface Served {
  url: string;
  stop: () => Promise<void>;
}

let built: string | null = null;

/** Builds the CLI as `npm run build` does, into the bench cache (so it is never stale), once per run. */
function cli(): string {
  if (built !== null) return built;
  const dir = resolve('node_modules/.cache/feed-agent-bench/service');
  execFileSync(process.execPath, ['scripts/build.mjs', '--outdir', dir]);
  built = join(dir, 'cli.js');
  return built;
}

/** Runs `feed-agent serve --port 0 ARGS`; resolves with its URL once it listens. */
export async function serve(args: string[] = []): Promise<Served> {
  const child = spawn(process.execPath, [cli(), 'serve', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((done) => child.once('exit', done));
  let out = '';
  const url = await new Promise<string>((resolveUrl, reject) => {
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const first = /^listening on (\S+)\n/.exec(out);
      if (first !== null) resolveUrl(first[1]);
    });
    void exited.then(() => reject(new Error('feed-agent serve exited: ' + out)));
  });
  child.stdout.resume();
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
