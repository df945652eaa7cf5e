// A deterministic clock and one-shot timers for tests: time moves only when a test advances it.
// Plain ES2020 with no host global, so the same code is bundled into the XS harness.
import type { TimerHandle } from '../../src/core/host/host';

interface Pending {
  id: number;
  at: number;
  fn: () => void;
}

export class VirtualClock {
  private t = 0;
  private nextId = 1;
  private timers: Pending[] = [];

  /**
   * @param idle awaited after every timer that fires, so the work it started (promise jobs, and with
   * a real HTTP host the requests it made) settles before time moves on.
   * @param start the time it shows first.
   */
  constructor(
    private readonly idle: () => Promise<void> = drainMicrotasks,
    start = 0,
  ) {
    this.t = start;
  }

  now = (): number => this.t;

  setTimer = (ms: number, fn: () => void): TimerHandle => {
    const timer = { id: this.nextId++, at: this.t + Math.max(0, ms), fn };
    // Keep the list sorted by due time, ties in the order they were set.
    let i = this.timers.length;
    while (i > 0 && this.timers[i - 1].at > timer.at) i--;
    this.timers.splice(i, 0, timer);
    return timer.id;
  };

  clearTimer = (handle: TimerHandle): void => {
    const i = this.timers.findIndex((t) => t.id === handle);
    if (i >= 0) this.timers.splice(i, 1);
  };

  /** Timers still armed. */
  get pending(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in order, each at its own time. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    await this.idle();
    for (;;) {
      const next = this.timers[0];
      if (next === undefined || next.at > end) break;
      this.timers.shift();
      this.t = next.at;
      next.fn();
      await this.idle();
    }
    this.t = end;
  }

  /** Advances in steps until `done()` holds or `limitMs` has passed; returns whether it held. */
  async advanceUntil(done: () => boolean, limitMs: number, stepMs = 100): Promise<boolean> {
    const end = this.t + limitMs;
    while (!done()) {
      if (this.t >= end) return false;
      await this.advance(Math.min(stepMs, end - this.t));
    }
    return true;
  }
}

/**
 * Lets queued promise jobs run: enough turns for several requests in a row inside the agent, each a
 * dozen promise hops (the client starts each step in a promise job, to keep the device's stack shallow).
 */
export async function drainMicrotasks(): Promise<void> {
  for (let i = 0; i < 200; i++) await Promise.resolve();
}
