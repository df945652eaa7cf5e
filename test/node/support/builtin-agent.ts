// Node bundles undici but does not export its Agent; the global dispatcher its fetch installs is one.
// Tests build dispatchers from it until the `undici` package is a dev dependency.
import type { Dispatcher } from '../../../platforms/node/http';

interface AgentOptions {
  connect?: { ca?: string | Buffer; timeout?: number };
}

export async function builtinAgent(options: AgentOptions): Promise<Dispatcher> {
  await fetch('data:,'); // the first fetch loads undici, which installs the global dispatcher
  const global = (globalThis as unknown as Record<symbol, object>)[Symbol.for('undici.globalDispatcher.1')];
  const Agent = global.constructor as new (options: AgentOptions) => Dispatcher;
  return new Agent(options);
}
