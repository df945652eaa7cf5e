// Presence: the service counts a resource alive for `lifetime` minutes after a non-silent authenticated
// request names it. Flushes do that as a side effect; when nothing non-silent has reached the service
// for a keep-alive interval, this makes one authenticated read of every resource (operation 2).
import type { Host } from './host';
import { Alarm } from './alarm';
import type { FeedClient } from './client';
import type { Counters } from './counters';
import type { Job } from './lane';
import { errorText } from './errors';

export class KeepAlive implements Job {
  wanted = false;
  private lastPresenceAt_ = 0;
  private readonly alarm_: Alarm;

  constructor(
    private readonly host_: Host,
    private readonly client_: FeedClient,
    private readonly ids_: readonly number[],
    private readonly counters_: Counters,
    private readonly report_: (level: 'warn', message: string) => void,
    private readonly want_: () => void,
    public intervalMs_: number,
  ) {
    this.alarm_ = new Alarm(host_, () => {
      if (this.host_.now() - this.lastPresenceAt_ >= this.intervalMs_) this.want_();
      else this.arm_();
    });
  }

  begin_(): void {
    this.alarm_.begin();
    this.lastPresenceAt_ = this.host_.now();
    this.arm_();
  }

  end_(): void {
    this.alarm_.end();
  }

  /** Something non-silent and authenticated reached the service. */
  seen_(): void {
    this.lastPresenceAt_ = this.host_.now();
  }

  async run(): Promise<void> {
    if (!this.alarm_.running) return;
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
    if (!this.alarm_.running || this.ids_.length === 0) return;
    this.alarm_.set(this.lastPresenceAt_ + this.intervalMs_, this.host_.now());
  }
}
