// The gateway's one request function toward the service: a token bucket in front of the shared HTTP
// pool, so that every device's requests together stay under `requestsPerSecond`. Waiting requests go in
// the order they asked, so after an outage a thousand devices take turns instead of storming the service,
// and each device sends its backlog oldest first (its queue is FIFO).
import type { HttpRequest, HttpResult } from '../core/host';

export type RequestFn = (req: HttpRequest) => Promise<HttpResult>;

export interface Paced {
  request: RequestFn;
  /** Requests waiting for a token now. */
  waiting(): number;
  /** Clears the refill timer; waiting requests are let through at once. */
  close(): void;
}

/** `request` behind a bucket of `perSecond` tokens a second holding at most `burst` (default: one second's worth). */
export function paceRequests(request: RequestFn, perSecond: number, burst = Math.max(1, Math.ceil(perSecond))): Paced {
  let tokens = burst;
  let refilledAt = performance.now();
  let timer: ReturnType<typeof setTimeout> | null = null;
  let closed = false;
  const queue: (() => void)[] = [];

  const refill = (): void => {
    const now = performance.now();
    tokens = Math.min(burst, tokens + ((now - refilledAt) * perSecond) / 1000);
    refilledAt = now;
  };
  const pump = (): void => {
    timer = null;
    refill();
    while (queue.length > 0 && (tokens >= 1 || closed)) {
      tokens--;
      (queue.shift() as () => void)();
    }
    if (queue.length > 0 && !closed) timer = setTimeout(pump, Math.ceil(((1 - tokens) * 1000) / perSecond)).unref();
  };

  return {
    request: (req) => {
      if (queue.length === 0 && !closed) {
        refill();
        if (tokens >= 1) {
          tokens--;
          return request(req);
        }
      }
      return new Promise<void>((go) => {
        queue.push(go);
        if (timer === null) pump();
      }).then(() => request(req));
    },
    waiting: () => queue.length,
    close: () => {
      closed = true;
      if (timer !== null) clearTimeout(timer);
      pump();
    },
  };
}
