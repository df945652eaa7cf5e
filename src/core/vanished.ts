// Resources the service says are gone: an operation-4 answer `404 element i: resource N not found`.
// A 404 can be the platform's passing mistake, so it only makes the resource suspect: its samples are
// held in the queue (none is sent, none thrown away) while it is read at once (operation 1, silent).
// Answered 404 too, it is gone: its new samples are set aside at intake, without a request (counted in
// `setAside` and per resource, given to `onSetAside`, reported once here rather than per sample), and its
// queued ones when they reach the head of the queue. It is looked up again within a minute, then less and
// less often, up to once an hour (backoff.ts), so that it comes back when the platform restores it. Found,
// its samples go again; a 404 for it soon after that is a refusal of the one element, not of the resource.
import type { Host } from './host';
import { Alarm } from './alarm';
import type { FeedClient } from './client';
import type { Job } from './lane';
import type { Resources } from './resources';
import { backoffDelay } from './backoff';
import type { Ladder } from './backoff';
import { FeedError, errorText } from './errors';

/** A 404 for a resource a lookup found within this long blames the element. */
const FOUND_LATELY_MS = 60_000;
/** A gone resource is looked up again with this backoff. */
const GONE: Ladder = Object.freeze({ baseMs: 60_000, capMs: 3_600_000 });
/** While a suspect's lookup fails (not with a 404), it is tried again with this backoff. */
const SUSPECT: Ladder = Object.freeze({ baseMs: 5_000, capMs: 60_000 });

export class Vanished implements Job {
  wanted = false;
  /**
   * The suspect and gone resources, and per resource: gone (confirmed), failed lookups since it turned
   * suspect or gone, when the service first said it was gone, the next lookup's time.
   */
  private readonly ids: number[] = [];
  private readonly confirmed: boolean[] = [];
  private readonly attempts: number[] = [];
  private readonly since: number[] = [];
  private readonly nextAt: number[] = [];
  /** Resources a lookup found after a 404, and when: a 404 for them in the next minute blames the element. */
  private readonly found: number[] = [];
  private readonly foundAt: number[] = [];
  private readonly alarm: Alarm;

  constructor(
    private readonly host: Host,
    private readonly client: FeedClient,
    private readonly resources: Resources,
    private readonly report: (level: 'warn' | 'info', message: string) => void,
    private readonly want: () => void,
    /** A suspect was found or confirmed gone: the uplink looks at its held samples again. */
    private readonly changed: () => void,
    /** Draws from [0, 1): the lookups' jitter. */
    private readonly random: () => number,
  ) {
    this.alarm = new Alarm(host, want);
  }

  /** How many resources are suspect or gone now: the uplink looks for their samples only while some are. */
  get count(): number {
    return this.ids.length;
  }

  /** Gone, confirmed: its samples are set aside. */
  isGone(resource: number): boolean {
    return this.resources.byId[resource]?.gone === true;
  }

  /** Suspect or gone: its samples are not sent. */
  isHeld(resource: number): boolean {
    return this.ids.indexOf(resource) >= 0;
  }

  begin(): void {
    this.alarm.begin();
    this.arm();
  }

  end(): void {
    this.alarm.end();
  }

  /**
   * The service said `resource` is gone (`reason`): it is read before anything is set aside. False when
   * a lookup found it within the last minute (or it is not the agent's): the 404 then blames the element.
   */
  suspect(resource: number, reason: string): boolean {
    if (this.isHeld(resource)) return true;
    if (this.resources.byId[resource] === undefined) return false;
    const f = this.found.indexOf(resource);
    if (f >= 0 && this.host.now() - this.foundAt[f] < FOUND_LATELY_MS) return false;
    this.ids.push(resource);
    this.confirmed.push(false);
    this.attempts.push(0);
    this.since.push(this.host.now());
    this.nextAt.push(this.host.now());
    this.report('warn', 'resource ' + resource + ' may be gone (' + reason + '): its samples wait while it is looked up');
    // Due now: the lane's next turn, without a timer.
    this.want();
    return true;
  }

  /** Looks up every suspect or gone resource whose time has come, one request each. */
  async run(): Promise<void> {
    for (let k = 0; k < this.ids.length && this.alarm.running; k++) {
      if (this.nextAt[k] > this.host.now()) continue;
      const id = this.ids[k];
      try {
        await this.client.getResource(id, { silent: true });
      } catch (e) {
        this.failed(k, id, e);
        continue;
      }
      const wasGone = this.confirmed[k];
      this.resources.setGone(id, false);
      this.ids.splice(k, 1);
      this.confirmed.splice(k, 1);
      this.attempts.splice(k, 1);
      this.since.splice(k, 1);
      this.nextAt.splice(k, 1);
      k--;
      const f = this.found.indexOf(id);
      if (f >= 0) {
        this.foundAt[f] = this.host.now();
      } else {
        this.found.push(id);
        this.foundAt.push(this.host.now());
      }
      this.report('info', 'resource ' + id + (wasGone ? ' is back' : ' exists after all') + ': its samples are queued again');
      this.changed();
    }
    this.arm();
  }

  private failed(k: number, id: number, e: unknown): void {
    const gone = e instanceof FeedError && e.status === 404;
    const confirmed = gone && !this.confirmed[k];
    if (confirmed) {
      // Gone: its own ladder, from the first rung.
      this.confirmed[k] = true;
      this.attempts[k] = 0;
      this.resources.setGone(id, true);
    }
    const now = this.host.now();
    const wait = backoffDelay(this.confirmed[k] ? GONE : SUSPECT, this.attempts[k]++, now - this.since[k], this.random());
    this.nextAt[k] = now + wait;
    if (confirmed) {
      this.report('warn', 'resource ' + id + ' is gone: its samples are set aside until it is back; looking it up again in ' + Math.ceil(wait / 1000) + ' s');
      this.changed();
    } else if (!gone) {
      this.report('warn', 'looking up resource ' + id + ' again: ' + errorText(e));
    }
  }

  private arm(): void {
    this.alarm.cancel();
    if (!this.alarm.running || this.ids.length === 0) return;
    let next = Infinity;
    for (const at of this.nextAt) if (at < next) next = at;
    this.alarm.set(next, this.host.now());
  }
}
