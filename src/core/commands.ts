// Commands from the platform: the last feed of each actuator resource (operation 6), polled on each
// actuator's period. The handler runs once for each new id_resource_feed and never twice for the same
// one. A poll sees only the last feed, so two commands written between polls: the later one wins.
import type { Host, TimerHandle } from './host';
import type { ActuatorConfig } from './config';
import type { FeedClient } from './client';
import type { Counters } from './counters';
import type { Job } from './lane';
import type { Resources } from './resources';
import type { Feed } from './wire';
import { errorText } from './errors';

export class Commands implements Job {
  wanted_ = false;
  /** id_resource_feed of the last command seen per actuator; -1 until the first poll answered. */
  private readonly lastId_: Float64Array;
  private readonly nextAt_: Float64Array;
  private readonly due_: Uint8Array;
  private timer_: TimerHandle | null = null;
  private running_ = false;
  private readonly onTimer_ = (): void => {
    this.timer_ = null;
    this.markDue_();
  };

  constructor(
    private readonly host_: Host,
    private readonly actuators_: readonly ActuatorConfig[],
    private readonly client_: FeedClient,
    private readonly resources_: Resources,
    private readonly counters_: Counters,
    private readonly report_: (level: 'warn' | 'error', message: string) => void,
    private readonly want_: () => void,
  ) {
    this.lastId_ = new Float64Array(actuators_.length).fill(-1);
    this.nextAt_ = new Float64Array(actuators_.length);
    this.due_ = new Uint8Array(actuators_.length);
  }

  begin_(): void {
    if (this.actuators_.length === 0) return;
    this.running_ = true;
    this.nextAt_.fill(this.host_.now());
    this.markDue_();
  }

  end_(): void {
    this.running_ = false;
    if (this.timer_ !== null) this.host_.clearTimer(this.timer_);
    this.timer_ = null;
  }

  async run_(): Promise<void> {
    if (!this.running_) return;
    const ids: number[] = [];
    const which: number[] = [];
    for (let i = 0; i < this.actuators_.length; i++) {
      if (this.due_[i] === 0) continue;
      this.due_[i] = 0;
      ids.push(this.actuators_[i].resource);
      which.push(i);
    }
    if (ids.length === 0) return;
    let feeds: (Feed | null)[];
    try {
      feeds = await this.client_.lastFeeds(ids, { silent: true });
    } catch (e) {
      this.counters_.lastError = errorText(e);
      this.report_('warn', 'command poll: ' + errorText(e));
      this.arm_();
      return;
    }
    for (let j = 0; j < which.length && this.running_; j++) await this.handle_(which[j], feeds[j]);
    this.arm_();
  }

  private async handle_(i: number, feed: Feed | null): Promise<void> {
    const seen = this.lastId_[i];
    const id = feed === null ? 0 : feed.id_resource_feed;
    this.lastId_[i] = Math.max(seen, id);
    if (feed === null || id <= seen) return;
    // The first answer is the state before the agent started: a command only if the actuator asks for it.
    if (seen < 0 && this.actuators_[i].applyCurrent !== true) return;
    const actuator = this.actuators_[i];
    this.counters_.commands++;
    try {
      await actuator.handle(this.resources_.parseCommand_(actuator.resource, feed.raw_data), feed);
    } catch (e) {
      this.counters_.commandErrors++;
      const message = 'command handler for resource ' + actuator.resource + ' threw: ' + errorText(e);
      this.counters_.lastError = message;
      this.report_('error', message);
    }
  }

  /** Marks every actuator whose poll is due and asks the lane; arms the timer for the next one. */
  private markDue_(): void {
    if (!this.running_) return;
    const now = this.host_.now();
    let any = false;
    for (let i = 0; i < this.actuators_.length; i++) {
      if (this.nextAt_[i] > now) continue;
      this.due_[i] = 1;
      any = true;
      const every = this.actuators_[i].every;
      this.nextAt_[i] += every * (Math.floor((now - this.nextAt_[i]) / every) + 1);
    }
    if (any) this.want_();
    else this.arm_();
  }

  private arm_(): void {
    if (!this.running_ || this.timer_ !== null) return;
    let next = Infinity;
    for (let i = 0; i < this.actuators_.length; i++) if (this.nextAt_[i] < next) next = this.nextAt_[i];
    this.timer_ = this.host_.setTimer(Math.max(0, next - this.host_.now()), this.onTimer_);
  }
}
