// Resources the service says are gone: an operation-4 answer `404 element i: resource N not found`.
// A 404 can be the platform's passing mistake, so it only makes the resource suspect: its samples are
// held in the queue (none is sent, none thrown away) while it is read at once (operation 1, silent).
// Answered 404 too, it is gone (`Known.gone`, resources.ts, the one place that says so): its new samples
// are set aside at intake, without a request (counted in `setAside` and per resource, given to
// `onSetAside`, reported once here rather than per sample), and its queued ones when they reach the head
// of the queue. It is looked up again within a minute, then less and less often, up to once an hour
// (backoff.ts), so that it comes back when the platform restores it. Found, its samples go again; a 404
// for it soon after that is a refusal of the one element, not of the resource.
//
// The uplink drives it: a 404 names a suspect (`suspect`), the uplink's turn in the lane makes the
// lookups that are due (`lookUp`), and its plan looks at `dueAt` and at what is held.
import type { Host, Log } from '../host/host';
import type { FeedClient } from '../wire/client';
import type { Resources } from '../resources/resources';
import type { Ladder } from '../requests/backoff';
import { FailureReport, RetryLadder } from '../requests/retry-ladder';
import { FeedError, errorText } from '../wire/errors';

/** A 404 for a resource a lookup found within this long blames the element. */
const FOUND_LATELY_MS = 60_000;
/** A gone resource is looked up again with this backoff. */
const GONE: Ladder = Object.freeze({ baseMs: 60_000, capMs: 3_600_000 });
/** While a suspect's lookup fails (not with a 404), it is tried again with this backoff. */
const SUSPECT: Ladder = Object.freeze({ baseMs: 5_000, capMs: 60_000 });

export interface VanishedParts {
  host: Pick<Host, 'now'>;
  client: FeedClient;
  resources: Resources;
  log: Log;
  /** Draws from [0, 1): the lookups' jitter. */
  random: () => number;
}

export class Vanished {
  private readonly host: Pick<Host, 'now'>;
  private readonly client: FeedClient;
  private readonly resources: Resources;
  private readonly log: Log;
  private readonly random: () => number;
  /**
   * The suspect and gone resources, and per resource: its lookups' retry ladder (a suspect's, then a
   * gone one's from the first rung), the next lookup's time.
   */
  private readonly ids: number[] = [];
  private readonly ladders: RetryLadder[] = [];
  private readonly nextAt: number[] = [];
  /** Resources a lookup found after a 404, and when: a 404 for them in the next minute blames the element. */
  private readonly found: number[] = [];
  private readonly foundAt: number[] = [];

  constructor(parts: VanishedParts) {
    this.host = parts.host;
    this.client = parts.client;
    this.resources = parts.resources;
    this.log = parts.log;
    this.random = parts.random;
  }

  /** How many resources are suspect or gone now: the uplink looks for their samples only while some are. */
  get count(): number {
    return this.ids.length;
  }

  /** When the next lookup is due; Infinity when none is. Asked at every plan of the uplink: it allocates nothing. */
  get dueAt(): number {
    let next = Infinity;
    for (let k = 0; k < this.nextAt.length; k++) if (this.nextAt[k] < next) next = this.nextAt[k];
    return next;
  }

  /** Gone, confirmed: its samples are set aside. */
  isGone(resource: number): boolean {
    return this.resources.byId[resource]?.gone === true;
  }

  /** Suspect or gone: its samples are not sent. */
  isHeld(resource: number): boolean {
    return this.ids.indexOf(resource) >= 0;
  }

  /**
   * Whether a 404 naming `resource` may mean it is gone: it is the agent's, and no lookup found it within
   * the last minute (then the 404 blames the element). Classifying an answer asks this (outcomes.ts).
   */
  mayBeGone(resource: number): boolean {
    if (this.isHeld(resource)) return true;
    if (this.resources.byId[resource] === undefined) return false;
    const f = this.found.indexOf(resource);
    return f < 0 || this.host.now() - this.foundAt[f] >= FOUND_LATELY_MS;
  }

  /** The service said `resource` is gone (`reason`): it is looked up at once, before anything is set aside. */
  suspect(resource: number, reason: string): void {
    if (this.isHeld(resource)) return;
    const now = this.host.now();
    this.ids.push(resource);
    this.ladders.push(new RetryLadder(SUSPECT, new FailureReport('lookup of resource ' + resource, this.log), this.random));
    this.nextAt.push(now);
    this.log('warn', 'resource ' + resource + ' may be gone (' + reason + '): its samples wait while it is looked up');
  }

  /** Looks up the first suspect or gone resource whose time has come (one request); true when it was found or found gone. */
  async lookUp(): Promise<boolean> {
    const now = this.host.now();
    const k = this.nextAt.findIndex((at) => at <= now);
    if (k < 0) return false;
    const id = this.ids[k];
    try {
      await this.client.getResource(id, { silent: true });
    } catch (e) {
      return this.failed(id, e);
    }
    // Where it is now: the list may have changed while the lookup was out.
    const j = this.ids.indexOf(id);
    const wasGone = this.isGone(id);
    this.resources.setGone(id, false);
    this.ids.splice(j, 1);
    this.ladders.splice(j, 1);
    this.nextAt.splice(j, 1);
    const f = this.found.indexOf(id);
    if (f >= 0) {
      this.foundAt[f] = this.host.now();
    } else {
      this.found.push(id);
      this.foundAt.push(this.host.now());
    }
    this.log('info', 'resource ' + id + (wasGone ? ' is back' : ' exists after all') + ': its samples are queued again');
    return true;
  }

  private failed(id: number, e: unknown): boolean {
    const k = this.ids.indexOf(id);
    const gone = e instanceof FeedError && e.status === 404;
    const confirmed = gone && !this.isGone(id);
    if (confirmed) {
      // Gone: its own ladder, from the first rung.
      this.ladders[k] = new RetryLadder(GONE, null, this.random);
      this.resources.setGone(id, true);
    }
    const now = this.host.now();
    const wait = this.ladders[k].fail(now, errorText(e));
    this.nextAt[k] = now + wait;
    if (confirmed) this.log('warn', 'resource ' + id + ' is gone: its samples are set aside until it is back; looking it up again in ' + Math.ceil(wait / 1000) + ' s');
    return confirmed;
  }
}
