// Resources the service says are gone: an operation-4 answer `404 element i: resource N not found`. A
// gone resource's new samples are set aside at intake, without a request (counted in `setAside`, given to
// `onSetAside`, reported once here rather than per sample); its queued ones are set aside when they reach
// the head of the queue. It is looked up again (operation 1, silent) a minute later, then less and less
// often, up to once an hour, so that it comes back when the platform restores it.
import type { Host, TimerHandle } from './host';
import type { FeedClient } from './client';
import type { Job } from './lane';
import type { Resources } from './resources';
import { FeedError, errorText } from './errors';

const FIRST_LOOKUP_MS = 60_000;
const MAX_LOOKUP_MS = 3_600_000;

export class Vanished implements Job {
  wanted = false;
  /** The gone resources, and per resource its lookups so far and when it is looked up next. */
  private readonly ids: number[] = [];
  private readonly attempts: number[] = [];
  private readonly nextAt: number[] = [];
  private timer: TimerHandle | null = null;
  private running = false;
  private readonly onTimer = (): void => {
    this.timer = null;
    this.want();
  };

  constructor(
    private readonly host: Host,
    private readonly client: FeedClient,
    private readonly resources: Resources,
    private readonly report: (level: 'warn' | 'info', message: string) => void,
    private readonly want: () => void,
  ) {}

  /** How many resources are gone now: the uplink looks for their samples at the head only while some are. */
  get count(): number {
    return this.ids.length;
  }

  has(resource: number): boolean {
    return this.resources.byId[resource]?.gone === true;
  }

  begin(): void {
    this.running = true;
    this.arm();
  }

  end(): void {
    this.running = false;
    if (this.timer !== null) this.host.clearTimer(this.timer);
    this.timer = null;
  }

  /** The service said `resource` is gone (`reason`). */
  mark(resource: number, reason: string): void {
    if (this.has(resource) || this.resources.byId[resource] === undefined) return;
    this.resources.setGone(resource, true);
    this.ids.push(resource);
    this.attempts.push(0);
    this.nextAt.push(this.host.now() + FIRST_LOOKUP_MS);
    this.report('warn', 'resource ' + resource + ' is gone (' + reason + '): its samples are set aside until it is back; looking it up again in ' +
      FIRST_LOOKUP_MS / 1000 + ' s');
    this.arm();
  }

  /** Looks up every gone resource whose time has come, one request each. */
  async run(): Promise<void> {
    for (let k = 0; k < this.ids.length && this.running; k++) {
      if (this.nextAt[k] > this.host.now()) continue;
      const id = this.ids[k];
      try {
        await this.client.getResource(id, { silent: true });
      } catch (e) {
        const wait = Math.min(MAX_LOOKUP_MS, FIRST_LOOKUP_MS * Math.pow(2, Math.min(++this.attempts[k], 16)));
        this.nextAt[k] = this.host.now() + wait;
        if (!(e instanceof FeedError && e.status === 404)) this.report('warn', 'looking up resource ' + id + ' again: ' + errorText(e));
        continue;
      }
      this.resources.setGone(id, false);
      this.ids.splice(k, 1);
      this.attempts.splice(k, 1);
      this.nextAt.splice(k, 1);
      k--;
      this.report('info', 'resource ' + id + ' is back: its samples are queued again');
    }
    this.arm();
  }

  private arm(): void {
    if (this.timer !== null) this.host.clearTimer(this.timer);
    this.timer = null;
    if (!this.running || this.ids.length === 0) return;
    let next = Infinity;
    for (const at of this.nextAt) if (at < next) next = at;
    this.timer = this.host.setTimer(Math.max(0, next - this.host.now()), this.onTimer);
  }
}
