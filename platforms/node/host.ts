// The Node host: HTTP over the built-in fetch, a monotonic clock, timers that never hold the process.
import { performance } from 'node:perf_hooks';

import type { Host, LogLevel, QueueStorage, TimerHandle } from '../../src/core/host';
import { createHttp } from './http';
import type { HttpOptions } from './http';

export interface NodeHostOptions extends HttpOptions {
  /** A durable queue (`openDurableQueue`); without one, queued samples live in memory only. */
  storage?: QueueStorage;
  /** Where the agent's log lines go. Messages never contain the token. */
  log?: (level: LogLevel, message: string) => void;
}

// setTimeout fires at once for a delay above 2^31 - 1 ms (about 24.8 days): longer waits are chained.
const MAX_DELAY = 2 ** 31 - 1;

interface ChainedTimer {
  current: ReturnType<typeof setTimeout>;
}

export function createNodeHost(options: NodeHostOptions = {}): Host {
  return {
    request: createHttp(options),
    // performance.now() only moves forward, whatever happens to the wall clock.
    now: () => performance.now(),
    setTimer,
    clearTimer: (handle: TimerHandle) => clearTimeout((handle as ChainedTimer).current),
    storage: options.storage,
    log: options.log,
  };
}

// Unref'd: a pending timer alone never keeps the process alive, so an agent that was stopped (or forgot
// a timer) lets the process exit. What keeps a process running an agent is the application's business.
function setTimer(ms: number, fn: () => void): TimerHandle {
  const timer = {} as ChainedTimer;
  const arm = (left: number): void => {
    timer.current = setTimeout(() => (left > MAX_DELAY ? arm(left - MAX_DELAY) : fn()), Math.min(left, MAX_DELAY));
    timer.current.unref();
  };
  arm(ms);
  return timer;
}
