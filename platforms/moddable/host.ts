// The Moddable host: HTTP over the classic `Request`, a monotonic clock from `Time.ticks`, timers from
// `Timer`, the log through `trace`, and optional storage (openFlashQueue). The SDK's modules come in as
// a value (modules.ts has the real ones), so that tests run this same code on stand-ins.
import type { Host, LogLevel, QueueStorage } from '../../src/core/host';
import { createClock, createTimers } from './clock';
import { createHttp } from './http';
import type { HttpOptions } from './http';
import type { Sdk } from './sdk';

export interface ModdableHostOptions extends HttpOptions {
  /** A flash queue (`openFlashQueue`); without one, queued samples live in RAM only. */
  storage?: QueueStorage;
  /** Where the agent's log lines go; default `trace`, one line each. Messages never contain the token. */
  log?: (level: LogLevel, message: string) => void;
}

export function createModdableHost(sdk: Sdk, options: ModdableHostOptions = {}): Host {
  return {
    request: createHttp(sdk, options),
    now: createClock(sdk.Time),
    ...createTimers(sdk.Timer),
    storage: options.storage,
    log: options.log ?? ((level, message) => sdk.trace(level + ': ' + message + '\n')),
  };
}
