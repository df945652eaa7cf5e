// `feed-agent serve` in a child process, as users run it: the benchmarks that need the local service
// start it here, so it has a core of its own and its CPU is not counted as the client's.
import { join } from 'node:path';
import { buildInto, ROOT } from '../test/support/build';
import { Served } from '../test/support/serve';

let built: string | null = null;

/** Builds the CLI as `npm run build` does, into the bench cache (so it is never stale), once per run. */
function cli(): string {
  return (built ??= buildInto(join(ROOT, 'node_modules', '.cache', 'feed-agent-bench', 'service')));
}

/** Runs `feed-agent serve --port 0 ARGS`; resolves once it listens (its `url`); `stop()` ends it. */
export function serve(args: string[] = []): Promise<Served> {
  return Served.start(cli(), ['--port', '0', ...args]);
}
