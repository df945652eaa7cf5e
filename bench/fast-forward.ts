// A host whose clock skips the time in which nothing happens, so an hour of a device's life takes
// seconds: timers fire in order, each at its due time; requests are real (the Node host's, over loopback)
// and the clock runs in real time while one is out, so every request's own duration counts. What it
// leaves out is only idle waiting, and the lateness of a real timer (a millisecond or so on Node).
import type { Host, HttpRequest, HttpResult, TimerHandle } from '../src/core/host/host';

interface Timer {
  at: number;
  fn: () => void;
}

export class FastForward {
  private skipped = 0;
  private readonly timers: Timer[] = [];
  private readonly pending = new Set<Promise<HttpResult>>();

  /** `base` makes the requests; the clock and the timers are this object's. */
  constructor(private readonly base: Host) {}

  readonly now = (): number => performance.now() + this.skipped;

  get host(): Host {
    return {
      request: (req: HttpRequest) => {
        const result = this.base.request(req);
        this.pending.add(result);
        void result.then(() => this.pending.delete(result));
        return result;
      },
      now: this.now,
      setTimer: (ms: number, fn: () => void): TimerHandle => {
        const timer = { at: this.now() + ms, fn };
        // Sorted by due time, ties in the order they were set.
        let i = this.timers.length;
        while (i > 0 && this.timers[i - 1].at > timer.at) i--;
        this.timers.splice(i, 0, timer);
        return timer;
      },
      clearTimer: (handle: TimerHandle) => {
        const i = this.timers.indexOf(handle as Timer);
        if (i >= 0) this.timers.splice(i, 1);
      },
    };
  }

  /** Runs the clock `ms` forward: waits out every request, then jumps to the next timer and fires it. */
  async run(ms: number): Promise<void> {
    const end = this.now() + ms;
    for (;;) {
      await this.settle();
      const next = this.timers[0];
      if (next === undefined || next.at > end) break;
      this.timers.shift();
      const now = this.now();
      if (next.at > now) this.skipped += next.at - now;
      next.fn();
    }
    const now = this.now();
    if (end > now) this.skipped += end - now;
  }

  /** Returns once no request is out and what the last answers started has run. */
  private async settle(): Promise<void> {
    for (;;) {
      await new Promise((resolve) => setImmediate(resolve));
      if (this.pending.size === 0) return;
      await Promise.race(this.pending);
    }
  }
}
