// The scaffold every timed part shares: whether it runs (between begin and end), and its one host timer,
// armed for the next thing due and cleared at end, so that a stopped part leaves no timer behind.
import type { Host, TimerHandle } from './host';

export class Alarm {
  /** Between `begin()` and `end()`. */
  running = false;
  /** When the armed timer fires; Infinity while none is armed. */
  dueAt = Infinity;
  private handle: TimerHandle | null = null;
  private readonly fire = (): void => {
    this.handle = null;
    this.dueAt = Infinity;
    this.ring();
  };

  /** `ring`: what the part does when its timer fires. */
  constructor(
    private readonly host: Pick<Host, 'setTimer' | 'clearTimer'>,
    private readonly ring: () => void,
  ) {}

  get armed(): boolean {
    return this.handle !== null;
  }

  begin(): void {
    this.running = true;
  }

  /** Not running any more, and no timer left armed. */
  end(): void {
    this.running = false;
    this.cancel();
  }

  /** Fires at `at` (at once when that is `now` or past), in place of any timer armed before. */
  set(at: number, now: number): void {
    this.cancel();
    this.dueAt = at;
    this.handle = this.host.setTimer(at > now ? at - now : 0, this.fire);
  }

  cancel(): void {
    if (this.handle !== null) this.host.clearTimer(this.handle);
    this.handle = null;
    this.dueAt = Infinity;
  }
}
