// A host's timer takes a delay that fits a signed 32-bit int, about 24.8 days (Node's setTimeout fires
// at once above it; Moddable's modTimer.c reads it into a C int): the adapters chain longer waits here.
import type { Host, TimerHandle } from './host';

const MAX_DELAY = 2 ** 31 - 1;

/** A wait longer than one host timer can take: the handle of the timer now running for it. */
class Chain {
  current: unknown = null;
}

/**
 * `Host['setTimer']` and `Host['clearTimer']` over a host's one-shot timer. A wait that fits is the
 * host's own handle, with nothing allocated around it.
 */
export function chainedTimers<T>(set: (fn: () => void, ms: number) => T, clear: (handle: T) => void): Pick<Host, 'setTimer' | 'clearTimer'> {
  return {
    setTimer(ms: number, fn: () => void): TimerHandle {
      if (ms <= MAX_DELAY) return set(fn, ms);
      const chain = new Chain();
      const arm = (left: number): void => {
        chain.current = set(() => (left > MAX_DELAY ? arm(left - MAX_DELAY) : fn()), Math.min(left, MAX_DELAY));
      };
      arm(ms);
      return chain;
    },
    clearTimer(handle: TimerHandle): void {
      clear((handle instanceof Chain ? handle.current : handle) as T);
    },
  };
}
