// The Moddable host: HTTP over one kept-open connection of the ECMA-419 client (keep-alive.ts), or over
// the classic `Request` (http.ts, a connection per request), a monotonic clock from `Time.ticks`, timers
// from `Timer`, the log through `trace`, and optional storage (openFlashQueue). The SDK's modules come in
// as a value (../modules.ts has the real ones), so that tests run this same code on stand-ins.
import type { Host, LogLevel, QueueStorage } from '../../../src/core/host/host';
import { createClock, createTimers } from './clock';
import { createHttp } from './http';
import type { HttpOptions } from './http';
import { createKeepAliveHttp } from './keep-alive';
import { traceLog } from './trace-log';
import type { Sdk } from './sdk';

export interface ModdableHostOptions extends HttpOptions {
  /**
   * How requests travel. Default 'keep-alive': one connection kept open for every request (a TLS
   * handshake per connection, not per request: README, "What it costs on the device"). 'classic': the
   * SDK's `Request`, a new connection for each request, for a build without the ECMA-419 client.
   */
  http?: 'keep-alive' | 'classic';
  /** A flash queue (`openFlashQueue`); without one, queued samples live in RAM only. */
  storage?: QueueStorage;
  /**
   * Where the agent's log lines go; default `trace`, one line each, a line equal to the one before said
   * once (trace-log.ts). Messages never contain the token.
   */
  log?: (level: LogLevel, message: string) => void;
}

export function createModdableHost(sdk: Sdk, options: ModdableHostOptions = {}): Host {
  const log = options.log ?? traceLog(sdk.trace);
  return {
    request: options.http === 'classic' ? createHttp(sdk, options) : createKeepAliveHttp(sdk, options, log),
    now: createClock(sdk.Time),
    ...createTimers(sdk.Timer),
    storage: options.storage,
    log,
  };
}
