// What the exchanges of both HTTP hosts (http.ts, keep-alive.ts) share: an exchange settles exactly once,
// into an Ending, whatever comes first (the answer, a failure, its timer); the timer is cleared on every
// path, and the host's own state is released before the caller hears of it. Callbacks that arrive later
// find it settled.
import type { Host, HttpRequest, HttpResult } from '../../../src/core/host/host';
import type { TimerModule } from './sdk';

/** The answer's headers the core reads, raw (src/core/host/host.ts): null when the answer had none. */
export interface AnswerHeaders {
  retryAfter: string | null;
  date: string | null;
  location: string | null;
}

/** An exchange's end: an HttpResult, or an answer whose body is still bytes (decoded in a job of its own). */
export type Ending = HttpResult | ({ kind: 'answer'; status: number; bytes: ArrayBuffer; length: number } & AnswerHeaders);

/** The HttpResult of an Ending, its body (the first `length` bytes) decoded natively. */
export function resultOf(decode: (bytes: ArrayBuffer, length: number) => string): (ending: Ending) => HttpResult {
  return (ending) =>
    ending.kind === 'answer'
      ? { kind: 'response', status: ending.status, retryAfter: ending.retryAfter, date: ending.date, location: ending.location, body: decode(ending.bytes, ending.length) }
      : ending;
}

/**
 * Host['request'] that runs `exchange` for one request at a time, each once the previous one's answer was
 * decoded: a host reads every answer into the one AnswerBody it holds. The core sends one at a time anyway
 * (src/core/requests/lane.ts); a second request would wait here. Each exchange starts from a promise job.
 */
export function inTurn(exchange: (req: HttpRequest) => Promise<Ending>, decode: (bytes: ArrayBuffer, length: number) => string): Host['request'] {
  const toResult = resultOf(decode);
  let last: Promise<unknown> = Promise.resolve();
  return (req) => {
    const result = last.then(() => exchange(req)).then(toResult);
    // A decode that threw must not stop every request after it.
    last = result.catch(() => undefined);
    return result;
  };
}

/** Keeps `value` when `name` is one of the answer's headers the core reads. */
export function keepHeader(headers: AnswerHeaders, name: string, value: string): void {
  if (name === 'retry-after') headers.retryAfter = value;
  else if (name === 'date') headers.date = value;
  else if (name === 'location') headers.location = value;
}

export abstract class Exchange {
  private timer: unknown = null;
  protected settled = false;
  /** The answer's status, once its status line came. */
  protected status = 0;

  constructor(
    private readonly timers: TimerModule,
    private readonly resolve: (ending: Ending) => void,
  ) {}

  /** Whether the service may have acted on the request: the socket took all of it, or an answer began. */
  protected abstract get reached(): boolean;

  /** Lets go of what the exchange holds, as it settles with `ending`. */
  protected abstract release(ending: Ending): void;

  /** Fails the exchange as a timeout after `ms`. */
  protected arm(ms: number): void {
    this.timer = this.timers.set(() => {
      this.timer = null;
      this.finish({ kind: 'timeout', maybeDelivered: this.reached });
    }, ms);
  }

  protected fail(message: string, maybeDelivered: boolean): void {
    this.finish({ kind: 'network', message, maybeDelivered });
  }

  protected finish(ending: Ending): void {
    if (this.settled) return;
    this.settled = true;
    if (this.timer !== null) this.timers.clear(this.timer);
    this.release(ending);
    this.resolve(ending);
  }
}
