// The host's monotonic clock and timers over the SDK's `time` and `timer`. `Time.ticks` is a signed
// 32-bit millisecond counter on most microcontrollers (it rolls over after 24.8 days) and a large float
// on the simulator; `Time.delta` is correct across the rollover (documentation/base/base.md). The clock
// adds up those deltas, so it starts at 0 and never goes back.
import { chainedTimers } from '../../../src/core/host/chained-timers';
import type { Host } from '../../../src/core/host/host';
import type { TimeModule, TimerModule } from './sdk';

/** `Host['now']`. It must be read at least once per rollover period: the agent's timers see to that. */
export function createClock(time: TimeModule): Host['now'] {
  let last = time.ticks;
  let elapsed = 0;
  return () => {
    const ticks = time.ticks;
    elapsed += Math.max(0, time.delta(last, ticks));
    last = ticks;
    return elapsed;
  };
}

/** `Host['setTimer']` and `Host['clearTimer']`: a one-shot Timer, which frees itself once it fired. */
export function createTimers(timer: TimerModule): Pick<Host, 'setTimer' | 'clearTimer'> {
  return chainedTimers((fn, ms) => timer.set(fn, ms), (id) => timer.clear(id));
}
