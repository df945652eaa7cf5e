// The Node host: HTTP over undici (http.ts), a monotonic clock, and timers that hold the process while
// an agent runs (or, by choice, never do).
import { performance } from 'node:perf_hooks';

import { chainedTimers } from '../../../src/core/host/chained-timers';
import type { Host, LogLevel, QueueStorage } from '../../../src/core/host/host';
import { createHttp } from './http';
import type { HttpOptions } from './http';
import { hostLog } from './log';

export interface NodeHostOptions extends HttpOptions {
  /** A durable queue (`openDurableQueue`); without one, queued samples live in memory only. */
  storage?: QueueStorage;
  /**
   * Where the agent's log lines go. Messages never contain the token. Without it, each kind of warning and
   * error is emitted once as a process warning (FeedAgentWarning); NODE_DEBUG=feed-agent prints every line.
   */
  log?: (level: LogLevel, message: string) => void;
  /**
   * Whether a running agent holds the process (default true): its timers (sampling, flushing, polling)
   * hold the event loop as a server's socket does, so a program that only starts an agent runs until
   * `stop()`, which clears them and lets the process exit. false: they never hold it, and keeping the
   * process running is the application's business (one that has its own server or loop).
   */
  holdProcess?: boolean;
  /**
   * The agent's requests go through this function instead of an HTTP client of its own (a gateway's one
   * paced pool). The HTTP options above then do not apply.
   */
  request?: Host['request'];
  /** Turns the agent waits for before each request (Host['turn']): a gateway's pace, shared by its devices. */
  turn?: Host['turn'];
  /** Lends the queue its memory (Host['memory']): a gateway's regions of a few large buffers. */
  memory?: Host['memory'];
}

const holding = chainedTimers((fn, ms) => setTimeout(fn, ms), (timer) => clearTimeout(timer));
const loose = chainedTimers((fn, ms) => setTimeout(fn, ms).unref(), (timer) => clearTimeout(timer));

export function createNodeHost(options: NodeHostOptions = {}): Host {
  // The option's name until issue 29; "keep-alive" now means only a connection kept open.
  if ('keepAlive' in options) throw new TypeError('createNodeHost: the option keepAlive was renamed holdProcess');
  return {
    request: options.request ?? createHttp(options),
    // performance.now() only moves forward, whatever happens to the wall clock.
    now: () => performance.now(),
    ...(options.holdProcess === false ? loose : holding),
    storage: options.storage,
    turn: options.turn,
    memory: options.memory,
    log: hostLog(options.log),
  };
}
