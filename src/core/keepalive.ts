// Presence: the service counts a resource alive for `lifetime` minutes after a non-silent authenticated
// request names it. Flushes do that as a side effect; when nothing non-silent has reached the service
// for a keep-alive interval, this makes one authenticated read of every resource (operation 2).
import type { Host, TimerHandle } from './host';
import type { FeedClient } from './client';
import type { Counters } from './counters';
import type { Job } from './lane';
import { errorText } from './errors';

export class KeepAlive implements Job {
  wanted = false;
  private lastPresenceAt_ = 0;
  private timer_: TimerHandle | null = null;
  private running_ = false;
  private readonly onTimer_ = (): void => {
    this.timer_ = null;
    if (this.host_.now() - this.lastPresenceAt_ >= this.intervalMs_) this.want_();
    else this.arm_();
  };

  constructor(
    private readonly host_: Host,
    private readonly client_: FeedClient,
    private readonly ids_: readonly number[],
    private readonly counters_: Counters,
    private readonly report_: (level: 'warn', message: string) => void,
    private readonly want_: () => void,
    public intervalMs_: number,
  ) {}

  begin_(): void {
    this.running_ = true;
    this.lastPresenceAt_ = this.host_.now();
    this.arm_();
  }

  end_(): void {
    this.running_ = false;
    if (this.timer_ !== null) this.host_.clearTimer(this.timer_);
    this.timer_ = null;
  }

  /** Something non-silent and authenticated reached the service. */
  seen_(): void {
    this.lastPresenceAt_ = this.host_.now();
  }

  async run(): Promise<void> {
    if (!this.running_) return;
    try {
      await this.client_.getResources(this.ids_);
      this.seen_();
    } catch (e) {
      this.counters_.lastError = errorText(e);
      this.report_('warn', 'keep-alive read: ' + errorText(e));
      // Try again after a fraction of the interval rather than a whole one: presence is about to lapse.
      this.lastPresenceAt_ = this.host_.now() - this.intervalMs_ + Math.ceil(this.intervalMs_ / 4);
    }
    this.arm_();
  }

  private arm_(): void {
    if (!this.running_ || this.ids_.length === 0) return;
    if (this.timer_ !== null) this.host_.clearTimer(this.timer_);
    const wait = Math.max(0, this.lastPresenceAt_ + this.intervalMs_ - this.host_.now());
    this.timer_ = this.host_.setTimer(wait, this.onTimer_);
  }
}
