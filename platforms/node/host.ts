// The Node host: HTTP over the built-in fetch, a monotonic clock, timers that never hold the process.
import { performance } from 'node:perf_hooks';

import { chainedTimers } from '../../src/core/chained-timers';
import type { Host, LogLevel, QueueStorage } from '../../src/core/host';
import { createHttp } from './http';
import type { HttpOptions } from './http';

export interface NodeHostOptions extends HttpOptions {
  /** A durable queue (`openDurableQueue`); without one, queued samples live in memory only. */
  storage?: QueueStorage;
  /** Where the agent's log lines go. Messages never contain the token. */
  log?: (level: LogLevel, message: string) => void;
}

// Unref'd: a pending timer alone never keeps the process alive, so an agent that was stopped (or forgot
// a timer) lets the process exit. What keeps a process running an agent is the application's business.
const timers = chainedTimers((fn, ms) => setTimeout(fn, ms).unref(), (timer) => clearTimeout(timer));

export function createNodeHost(options: NodeHostOptions = {}): Host {
  return {
    request: createHttp(options),
    // performance.now() only moves forward, whatever happens to the wall clock.
    now: () => performance.now(),
    ...timers,
    storage: options.storage,
    log: options.log,
  };
}
