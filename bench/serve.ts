// `feed-agent serve` in a child process, as users run it: the benchmarks that need the local service
// start it here, so it has a core of its own and its CPU is not counted as the client's.
import { buildInto, workDir } from '../test/support/build';
import { Served } from '../test/support/serve';

let built: string | null = null;

/** Builds the CLI as `npm run build` does, into a directory of this run (so it is never stale), once per run. */
export function cli(): string {
  if (built === null) {
    const work = workDir('bench-service-');
    process.once('exit', work.remove);
    built = buildInto(work.dir);
  }
  return built;
}

/** Runs `feed-agent serve --port 0 ARGS`; resolves once it listens (its `url`); `stop()` ends it. */
export function serve(args: string[] = []): Promise<Served> {
  return Served.start(cli(), ['--port', '0', ...args]);
}
