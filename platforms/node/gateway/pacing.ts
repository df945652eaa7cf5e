// The gateway's pace toward the service: a token bucket that grants turns, so that every device's requests
// together stay under `requestsPerSecond`. A device's agent waits for a turn before it chooses and builds
// its next request (Host['turn']), so that a thousand devices waiting hold no request bodies, and a batch
// carries what was queued up to its turn. Turns go in the order they were asked for, so after an outage a
// thousand devices take turns instead of storming the service, and each device sends its backlog oldest
// first (its queue is FIFO).
import type { HttpRequest, HttpResult } from '../../../src/core/host/host';

export type RequestFn = (req: HttpRequest) => Promise<HttpResult>;

export interface Paced {
  /** Resolves when a request may go: at once while tokens are left, else in the order asked. */
  turn(): Promise<void>;
  /** Turns waiting for a token now. */
  waiting(): number;
  /** Clears the refill timer; waiting turns are granted at once. */
  close(): void;
}

const GRANTED = Promise.resolve();

/** Turns at `perSecond` a second, from a bucket holding at most `burst` (default: one second's worth). */
export function paceRequests(perSecond: number, burst = Math.max(1, Math.ceil(perSecond))): Paced {
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
    turn: () => {
      if (queue.length === 0 && !closed) {
        refill();
        if (tokens >= 1) {
          tokens--;
          return GRANTED;
        }
      }
      if (closed) return GRANTED;
      return new Promise<void>((go) => {
        queue.push(go);
        if (timer === null) pump();
      });
    },
    waiting: () => queue.length,
    close: () => {
      closed = true;
      if (timer !== null) clearTimeout(timer);
      pump();
    },
  };
}
