// Presence: the service counts a resource alive for `lifetime` minutes after a non-silent authenticated
// request names it. Flushes do that as a side effect; when nothing non-silent has reached the service
// for `presenceMs`, this makes one authenticated read of every resource (operation 2).
import type { Host } from '../host/host';
import { Alarm } from '../host/alarm';
import type { FeedClient } from '../wire/client';
import type { Counters } from '../host/counters';
import type { Job, Lane } from '../requests/lane';
import { errorText } from '../wire/errors';
import type { RetryLadder } from '../requests/retry-ladder';

export interface PresenceParts {
  host: Host;
  client: FeedClient;
  /** The resources it keeps present. */
  ids: readonly number[];
  counters: Counters;
  lane: Lane;
  /** The first `presenceMs`. */
  intervalMs: number;
  /** A failed read is tried again after its backoff, and said once. */
  ladder: RetryLadder;
}

export class Presence implements Job {
  wanted = false;
  private lastPresenceAt = 0;
  private intervalMs: number;
  private readonly host: Host;
  private readonly client: FeedClient;
  private readonly ids: readonly number[];
  private readonly counters: Counters;
  private readonly lane: Lane;
  private readonly alarm: Alarm;
  private readonly ladder: RetryLadder;

  constructor(parts: PresenceParts) {
    this.host = parts.host;
    this.client = parts.client;
    this.ids = parts.ids;
    this.counters = parts.counters;
    this.lane = parts.lane;
    this.intervalMs = parts.intervalMs;
    this.ladder = parts.ladder;
    this.alarm = new Alarm(parts.host, () => {
      if (this.host.now() - this.lastPresenceAt >= this.intervalMs) this.lane.want(this);
      else this.arm();
    });
  }

  begin(): void {
    this.alarm.begin();
    this.lastPresenceAt = this.host.now();
    this.arm();
  }

  end(): void {
    this.alarm.end();
  }

  /** Reads every `ms` from now on: half the shortest lifetime, once the lookup learnt it. */
  changeInterval(ms: number): void {
    this.intervalMs = ms;
  }

  /** Something non-silent and authenticated reached the service. */
  seen(): void {
    this.lastPresenceAt = this.host.now();
  }

  async run(): Promise<void> {
    if (!this.alarm.running) return;
    try {
      await this.client.getResources(this.ids);
      this.ladder.succeed(this.host.now());
      this.seen();
    } catch (e) {
      this.counters.lastError = errorText(e);
      // Presence is about to lapse: tried again after the backoff, at most a quarter of the interval away.
      const now = this.host.now();
      this.lastPresenceAt = now - this.intervalMs + Math.min(this.ladder.fail(now, errorText(e)), Math.ceil(this.intervalMs / 4));
    }
    this.arm();
  }

  private arm(): void {
    if (!this.alarm.running || this.ids.length === 0) return;
    this.alarm.set(this.lastPresenceAt + this.intervalMs, this.host.now());
  }
}
