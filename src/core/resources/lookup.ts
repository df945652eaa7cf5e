// The lookup of the agent's resources (operation 2): once at start, and, when the service could not be
// reached then, again in its turn in the lane on its retry ladder until it is answered. What it learns
// (restrictions, lifetimes, the last feeds) goes to the parts that need it.
import type { Host, Log } from '../host/host';
import type { FeedClient } from '../wire/client';
import type { Counters } from '../host/counters';
import type { Job, Lane } from '../requests/lane';
import type { Presence } from './presence';
import type { Resource } from '../wire/wire';
import type { RetryLadder } from '../requests/retry-ladder';
import type { Resources } from './resources';
import { MissingResourceError } from './resources';
import { errorText } from '../wire/errors';

export interface LookupParts {
  host: Pick<Host, 'now' | 'setTimer' | 'clearTimer'>;
  client: FeedClient;
  resources: Resources;
  /** The reconciler (delivery/reconcile.ts), which sits above this folder: it learns each resource's last feed. */
  reconciler: { looked(records: readonly Resource[]): void };
  presence: Pick<Presence, 'seen' | 'changeInterval'>;
  /** Presence reads follow the resources' lifetime unless the config set their interval. */
  presenceSet: boolean;
  counters: Counters;
  log: Log;
  lane: Lane;
  ladder: RetryLadder;
}

export class Lookup implements Job {
  wanted = false;
  /** Retries go on while the agent runs. */
  running = false;
  private timer: unknown = null;
  private readonly host: Pick<Host, 'now' | 'setTimer' | 'clearTimer'>;
  private readonly client: FeedClient;
  private readonly resources: Resources;
  private readonly reconciler: LookupParts['reconciler'];
  private readonly presence: Pick<Presence, 'seen' | 'changeInterval'>;
  private readonly presenceSet: boolean;
  private readonly counters: Counters;
  private readonly log: Log;
  private readonly lane: Lane;
  private readonly ladder: RetryLadder;

  constructor(parts: LookupParts) {
    this.host = parts.host;
    this.client = parts.client;
    this.resources = parts.resources;
    this.reconciler = parts.reconciler;
    this.presence = parts.presence;
    this.presenceSet = parts.presenceSet;
    this.counters = parts.counters;
    this.log = parts.log;
    this.lane = parts.lane;
    this.ladder = parts.ladder;
  }

  /** Reads the resources once: null when that succeeded, else what failed (kept as the last error). */
  async once(): Promise<unknown> {
    try {
      const records = await this.resources.lookup(this.client, (m) => this.log('warn', m));
      // Presence was refreshed, presence reads follow the lifetime, and reconciliation starts from the last feeds.
      this.reconciler.looked(records);
      this.presence.seen();
      if (!this.presenceSet && this.resources.shortestLifetimeMin > 0) this.presence.changeInterval((this.resources.shortestLifetimeMin * 60_000) / 2);
      return null;
    } catch (e) {
      this.counters.lastError = errorText(e);
      return e;
    }
  }

  /** The lookup failed (`failure`): it goes again after its backoff. */
  retry(failure: unknown): void {
    this.timer = this.host.setTimer(this.ladder.fail(this.host.now(), errorText(failure)), () => {
      this.timer = null;
      this.lane.want(this);
    });
  }

  /** Stops retrying; a lookup in flight still settles, and arms nothing. */
  end(): void {
    this.running = false;
    if (this.timer !== null) this.host.clearTimer(this.timer);
    this.timer = null;
  }

  /** The retry's turn in the lane. */
  async run(): Promise<void> {
    if (!this.running) return;
    const failure = await this.once();
    if (failure === null) {
      this.ladder.succeed(this.host.now());
      return;
    }
    if (failure instanceof MissingResourceError) this.log('error', 'resource lookup: ' + errorText(failure));
    // stop() may have come while the lookup was out: nothing may arm a timer then.
    else if (this.running) this.retry(failure);
  }
}
