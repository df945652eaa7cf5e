// Commands from the platform: the last feed of each actuator resource (operation 6), polled on each
// actuator's period. The handler runs once for each new id_resource_feed and never twice for the same
// one. A poll sees only the last feed, so two commands written between polls: the later one wins.
//
// A handler runs outside the lane: the poll hands it the command and is done, so a slow handler holds up
// no request. One actuator's handlers run one at a time: a command that comes while the last one's handler
// is still running waits for it (a newer command replaces a waiting one: the later one wins, as between
// polls). A handler that has not settled within the actuator's `timeoutMs` is reported, counted in
// `commandErrors` and no longer awaited: the next command of that actuator may then run beside it.
import type { Host, Log, TimerHandle } from '../host/host';
import type { ActuatorConfig } from '../config';
import { DEFAULT_HANDLER_TIMEOUT_MS } from '../config';
import type { FeedClient } from '../wire/client';
import type { Counters } from '../host/counters';
import type { Job, Lane } from '../requests/lane';
import type { Resources } from './resources';
import type { Feed } from '../wire/wire';
import { errorText } from '../wire/errors';
import { Alarm } from '../host/alarm';
import type { RetryLadder } from '../requests/retry-ladder';

export interface CommandsParts {
  host: Host;
  actuators: readonly ActuatorConfig[];
  client: FeedClient;
  resources: Resources;
  counters: Counters;
  log: Log;
  lane: Lane;
  /** The polls' retry ladder: a failed poll puts the next off by its backoff, and says so once. */
  ladder: RetryLadder;
}

export class Commands implements Job {
  wanted = false;
  private readonly host: Host;
  private readonly actuators: readonly ActuatorConfig[];
  private readonly client: FeedClient;
  private readonly resources: Resources;
  private readonly counters: Counters;
  private readonly log: Log;
  private readonly lane: Lane;
  private readonly ladder: RetryLadder;
  /** id_resource_feed of the last command seen per actuator; -1 until the first poll answered. */
  private readonly lastId: Float64Array;
  private readonly nextAt: Float64Array;
  private readonly due: Uint8Array;
  /** Per actuator: the time limit of the handler running now; null when none is awaited. */
  private readonly limits: (TimerHandle | null)[];
  /** Per actuator: the command waiting for the running handler; null when none. */
  private readonly waiting: (Feed | null)[];
  private readonly alarm: Alarm;

  constructor(parts: CommandsParts) {
    const actuators = parts.actuators;
    this.host = parts.host;
    this.actuators = actuators;
    this.client = parts.client;
    this.resources = parts.resources;
    this.counters = parts.counters;
    this.log = parts.log;
    this.lane = parts.lane;
    this.ladder = parts.ladder;
    this.lastId = new Float64Array(actuators.length).fill(-1);
    this.nextAt = new Float64Array(actuators.length);
    this.due = new Uint8Array(actuators.length);
    this.limits = actuators.map(() => null);
    this.waiting = actuators.map(() => null);
    this.alarm = new Alarm(parts.host, () => this.markDue());
  }

  begin(): void {
    this.alarm.begin();
    this.nextAt.fill(this.host.now());
    this.markDue();
  }

  /** Stops polling; a handler still running is no longer awaited, and a waiting command is dropped. */
  end(): void {
    this.alarm.end();
    for (let i = 0; i < this.actuators.length; i++) {
      this.settled(i);
      this.waiting[i] = null;
    }
  }

  async run(): Promise<void> {
    if (!this.alarm.running) return;
    const ids: number[] = [];
    const which: number[] = [];
    for (let i = 0; i < this.actuators.length; i++) {
      if (this.due[i] === 0) continue;
      this.due[i] = 0;
      ids.push(this.actuators[i].resource);
      which.push(i);
    }
    if (ids.length === 0) return;
    let feeds: (Feed | null)[];
    try {
      feeds = await this.client.lastFeeds(ids, { silent: true });
    } catch (e) {
      this.counters.lastError = errorText(e);
      const now = this.host.now();
      // The actuators it asked for wait out the backoff, however short their period.
      const retryAt = now + this.ladder.fail(now, errorText(e));
      for (let j = 0; j < which.length; j++) this.nextAt[which[j]] = Math.max(this.nextAt[which[j]], retryAt);
      this.arm();
      return;
    }
    this.ladder.succeed(this.host.now());
    for (let j = 0; j < which.length; j++) this.received(which[j], feeds[j]);
    this.arm();
  }

  /** A poll's answer for actuator `i`: a new command runs now, or waits for the handler running. */
  private received(i: number, feed: Feed | null): void {
    const seen = this.lastId[i];
    const id = feed === null ? 0 : feed.id_resource_feed;
    this.lastId[i] = Math.max(seen, id);
    if (feed === null || id <= seen || !this.alarm.running) return;
    // The first answer is the state before the agent started: a command only if the actuator asks for it.
    if (seen < 0 && this.actuators[i].applyCurrent !== true) return;
    if (this.limits[i] !== null) this.waiting[i] = feed;
    else this.start(i, feed);
  }

  private start(i: number, feed: Feed): void {
    const actuator = this.actuators[i];
    this.counters.commands++;
    // Settling after the time limit, or after end(), this handler's run is no longer the one awaited.
    const limit = this.host.setTimer(actuator.timeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS, () => {
      if (this.limits[i] !== limit) return;
      this.failed(actuator, 'has not settled after ' + (actuator.timeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS) + ' ms; no longer awaited');
      this.next(i);
    });
    this.limits[i] = limit;
    const done = (): void => {
      if (this.limits[i] === limit) this.next(i);
    };
    let result: unknown;
    try {
      result = actuator.handle(this.resources.parseCommand(actuator.resource, feed.raw_data), feed);
    } catch (e) {
      result = Promise.reject(e);
    }
    Promise.resolve(result).then(done, (e: unknown) => {
      if (this.limits[i] === limit) this.failed(actuator, 'threw: ' + errorText(e));
      done();
    });
  }

  /** Actuator `i`'s handler settled or was given up: the command waiting for it runs. */
  private next(i: number): void {
    this.settled(i);
    const feed = this.waiting[i];
    this.waiting[i] = null;
    if (feed !== null && this.alarm.running) this.start(i, feed);
  }

  private settled(i: number): void {
    const limit = this.limits[i];
    if (limit !== null) this.host.clearTimer(limit);
    this.limits[i] = null;
  }

  private failed(actuator: ActuatorConfig, what: string): void {
    this.counters.commandErrors++;
    const message = 'command handler for resource ' + actuator.resource + ' ' + what;
    this.counters.lastError = message;
    this.log('error', message);
  }

  /** Marks every actuator whose poll is due and asks the lane; arms the timer for the next one. */
  private markDue(): void {
    if (!this.alarm.running) return;
    const now = this.host.now();
    let any = false;
    for (let i = 0; i < this.actuators.length; i++) {
      if (this.nextAt[i] > now) continue;
      this.due[i] = 1;
      any = true;
      const every = this.actuators[i].every;
      this.nextAt[i] += every * (Math.floor((now - this.nextAt[i]) / every) + 1);
    }
    if (any) this.lane.want(this);
    else this.arm();
  }

  private arm(): void {
    if (!this.alarm.running || this.alarm.armed) return;
    let next = Infinity;
    for (let i = 0; i < this.actuators.length; i++) if (this.nextAt[i] < next) next = this.nextAt[i];
    this.alarm.set(next, this.host.now());
  }
}
