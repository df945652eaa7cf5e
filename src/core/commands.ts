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

export class Commands implements Job {
  wanted = false;
  /** id_resource_feed of the last command seen per actuator; -1 until the first poll answered. */
  private readonly lastId: Float64Array;
  private readonly nextAt: Float64Array;
  private readonly due: Uint8Array;
  private timer: TimerHandle | null = null;
  private running = false;
  private readonly onTimer = (): void => {
    this.timer = null;
    this.markDue();
  };

  constructor(
    private readonly host: Host,
    private readonly actuators: readonly ActuatorConfig[],
    private readonly client: FeedClient,
    private readonly resources: Resources,
    private readonly counters: Counters,
    private readonly report: (level: 'warn' | 'error', message: string) => void,
    private readonly want: () => void,
  ) {
    this.lastId = new Float64Array(actuators.length).fill(-1);
    this.nextAt = new Float64Array(actuators.length);
    this.due = new Uint8Array(actuators.length);
  }

  begin(): void {
    if (this.actuators.length === 0) return;
    this.running = true;
    this.nextAt.fill(this.host.now());
    this.markDue();
  }

  end(): void {
    this.running = false;
    if (this.timer !== null) this.host.clearTimer(this.timer);
    this.timer = null;
  }

  async run(): Promise<void> {
    if (!this.running) return;
    const ids: number[] = [];
    const which: number[] = [];
    for (let i = 0; i < this.actuators.length; i++) {
      if (this.due[i] === 0) continue;
      this.due[i] = 0;
      ids.push(this.actuators[i].resource);
      which.push(i);
    }
    if (ids.length === 0) return;
    this.counters.requests++;
    let feeds: (Feed | null)[];
    try {
      feeds = await this.client.lastFeeds(ids, { silent: true });
    } catch (e) {
      this.counters.lastError = (e as Error).message;
      this.report('warn', 'command poll: ' + (e as Error).message);
      this.arm();
      return;
    }
    for (let j = 0; j < which.length && this.running; j++) await this.handle(which[j], feeds[j]);
    this.arm();
  }

  private async handle(i: number, feed: Feed | null): Promise<void> {
    const seen = this.lastId[i];
    const id = feed === null ? 0 : feed.id_resource_feed;
    this.lastId[i] = Math.max(seen, id);
    if (feed === null || id <= seen) return;
    // The first answer is the state before the agent started: a command only if the actuator asks for it.
    if (seen < 0 && this.actuators[i].applyCurrent !== true) return;
    const actuator = this.actuators[i];
    this.counters.commands++;
    try {
      await actuator.handle(this.resources.parseCommand(actuator.resource, feed.raw_data), feed);
    } catch (e) {
      this.counters.commandErrors++;
      const message = 'command handler for resource ' + actuator.resource + ' threw: ' + (e instanceof Error ? e.message : String(e));
      this.counters.lastError = message;
      this.report('error', message);
    }
  }

  /** Marks every actuator whose poll is due and asks the lane; arms the timer for the next one. */
  private markDue(): void {
    if (!this.running) return;
    const now = this.host.now();
    let any = false;
    for (let i = 0; i < this.actuators.length; i++) {
      if (this.nextAt[i] > now) continue;
      this.due[i] = 1;
      any = true;
      const every = this.actuators[i].every;
      this.nextAt[i] += every * (Math.floor((now - this.nextAt[i]) / every) + 1);
    }
    if (any) this.want();
    else this.arm();
  }

  private arm(): void {
    if (!this.running || this.timer !== null) return;
    let next = Infinity;
    for (let i = 0; i < this.actuators.length; i++) if (this.nextAt[i] < next) next = this.nextAt[i];
    this.timer = this.host.setTimer(Math.max(0, next - this.host.now()), this.onTimer);
  }
}
