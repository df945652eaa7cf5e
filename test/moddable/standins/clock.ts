// Stand-ins for the SDK's `timer` and `time` over the tests' virtual clock. Time.ticks behaves as on a
// microcontroller: a signed 32-bit millisecond counter that rolls over (documentation/base/base.md), so a
// test can start it just short of 2^31 and watch the host's clock cross the rollover.
import type { TimeModule, TimerModule } from '../../../platforms/moddable/host/sdk';
import type { VirtualClock } from '../../support/virtual-clock';

export function timerStandIn(clock: VirtualClock): TimerModule {
  return {
    set: (callback, ms) => clock.setTimer(ms, callback),
    // As modTimer.c: clearing a one-shot that already fired, or nothing, is no error.
    clear: (id) => {
      if (id !== undefined && id !== null) clock.clearTimer(id);
    },
  };
}

/** `start`: the ticks at virtual time 0. */
export function timeStandIn(clock: VirtualClock, start: number): TimeModule {
  const ticks = (): number => (start + clock.now()) | 0;
  return {
    get ticks() {
      return ticks();
    },
    delta: (from, to = ticks()) => (to - from) | 0,
  };
}
