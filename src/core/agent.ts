// The agent: samples sensors into the fixed-memory queue, flushes it through the uplink, polls commands,
// keeps presence alive. It owns the order of start and stop and is the only place parts meet.
import type { Host, LogLevel, SampleValue } from './host';
import type { AgentConfig, UplinkConfig } from './config';
import { checkConfig, ConfigError, DEFAULT_KEEP_ALIVE_MS, DEFAULT_LOOKUP_RETRY_MS, uplinkSettings } from './config';
import { FeedClient } from './client';
import { FeedError } from './errors';
import { Commands } from './commands';
import type { Counters } from './counters';
import { createCounters } from './counters';
import { KeepAlive } from './keepalive';
import { Lane } from './lane';
import type { Job } from './lane';
import { DROPPED_NEW, PUSHED_EVICTED, SampleQueue, TOO_LARGE } from './queue';
import { createRandom } from './random';
import { MissingResourceError, Resources } from './resources';
import type { Known } from './resources';
import { Sampler } from './sampler';
import { Uplink } from './uplink';
import { checkInput } from './validate';

export interface AgentStats {
  queued: number;
  capacity: number;
  highWater: number;
  accepted: number;
  sent: number;
  batches: number;
  requests: number;
  retries: number;
  droppedOverflow: number;
  rejectedInvalid: number;
  setAside: number;
  ambiguous: number;
  commands: number;
  commandErrors: number;
  storageErrors: number;
  /** Age of the oldest queued sample in ms; -1 when the queue is empty. */
  oldestAgeMs: number;
  lastError: string | null;
  /** The service refuses the token: nothing is sent until it accepts it again. */
  authPaused: boolean;
  /** Current batch size (halved by 413 answers). */
  batchLimit: number;
}

export interface StopOptions {
  /** Deliver what is queued before stopping (default true). */
  flush?: boolean;
  /** Give up draining after this long (default 30 s); what is left stays in durable storage, if any. */
  timeoutMs?: number;
}

export interface Agent {
  /**
   * Reads the resources (operation 2) to learn their restrictions and check they exist, then starts
   * sampling, flushing and polling. Rejects with MissingResourceError naming unknown ids, or with the
   * FeedError of a refused token. If the service cannot be reached, it starts anyway and retries the lookup.
   */
  start(): Promise<void>;
  stop(options?: StopOptions): Promise<AgentStats>;
  /** Sends what is queued now; true once all of it has left the queue, false at the first failure. */
  flush(): Promise<boolean>;
  /** Queues one reading by hand for a configured resource, with the same checks as a sensor's; false when it was refused. */
  record(resource: number, value: SampleValue): boolean;
  stats(): AgentStats;
  /** Nothing queued and nothing in flight: a device may sleep. */
  canSleep(): boolean;
}

const DEFAULT_DRAIN_MS = 30_000;

export function createAgent(host: Host, config: AgentConfig): Agent {
  return new FeedAgent(host, checkConfig(config));
}

class FeedAgent implements Agent {
  private readonly counters: Counters = createCounters();
  private readonly settings: UplinkConfig;
  private readonly queue: SampleQueue;
  private readonly client: FeedClient;
  private readonly resources: Resources;
  /** `resources.byId`: an object, as XS reads a property in fewer bytecodes than it calls Map.get. */
  private readonly known: Record<number, Known>;
  private readonly sampler: Sampler;
  private readonly uplink: Uplink;
  private readonly commands: Commands;
  private readonly keepAlive: KeepAlive;
  private readonly lookupJob: Job;
  private readonly lane: Lane;
  private readonly warned = new Set<number>();
  private state: 'new' | 'running' | 'stopping' | 'stopped' = 'new';
  /** Sequence numbers matter to durable storage only, whose samples all take `intake`. */
  private nextSeq = 0;
  /** `queue.end` once durable storage was restored: every later position is a sample accepted by this run. */
  private restoredEnd = 0;
  private ackedSeq = -1;
  private lookupTimer: unknown = null;

  constructor(
    private readonly host: Host,
    private readonly config: AgentConfig,
  ) {
    this.settings = uplinkSettings(config);
    const s = this.settings;
    const sensors = config.sensors ?? [];
    const actuators = config.actuators ?? [];
    this.queue = new SampleQueue({ capacity: s.queue, overflow: s.overflow, stringBytes: s.stringBytes, withSeq: host.storage !== undefined });
    this.client = new FeedClient((req) => host.request(req), {
      baseUrl: config.url,
      publicKey: config.publicKey,
      token: config.token,
      timeoutMs: s.timeoutMs,
    });
    const ids: number[] = [];
    for (const id of [...sensors.map((x) => x.resource), ...actuators.map((x) => x.resource), ...(config.resources ?? [])]) {
      if (ids.indexOf(id) < 0) ids.push(id);
    }
    this.resources = new Resources(ids, (id) => this.queue.numberTag(id));
    this.known = this.resources.byId;
    const random = createRandom(config.seed ?? Math.floor(Math.random() * 4294967296));
    const report = (level: LogLevel, message: string): void => this.log(level, message);
    this.uplink = new Uplink(host, this.client, this.queue, s, this.counters, random, {
      setAside: (resource, value, reason) => this.setAside(resource, value, reason),
      departed: () => this.checkpoint(),
      presence: () => this.keepAlive.seen(),
      report,
    }, () => this.lane.want(this.uplink));
    this.commands = new Commands(host, actuators, this.client, this.resources, this.counters, report, () => this.lane.want(this.commands));
    this.keepAlive = new KeepAlive(host, this.client, ids, this.counters, report, () => this.lane.want(this.keepAlive),
      config.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS);
    this.lookupJob = { wanted: false, run: () => this.lookup() };
    // The lookup gates validation, data matters more than commands, presence is least urgent.
    this.lane = new Lane([this.lookupJob, this.uplink, this.commands, this.keepAlive]);
    this.sampler = new Sampler(host, sensors, {
      sample: (i, value) => {
        this.record(sensors[i].resource, value as SampleValue);
      },
      readFailed: (i, e) => this.invalid(sensors[i].resource, 'read failed: ' + (e instanceof Error ? e.message : String(e))),
    });
  }

  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error('the agent was started already');
    this.restore();
    this.counters.requests++;
    try {
      await this.resources.lookup(this.client, (m) => this.log('warn', m));
      this.learnt();
    } catch (e) {
      if (e instanceof MissingResourceError || (e instanceof FeedError && !e.retryable)) {
        this.state = 'stopped';
        this.host.storage?.close?.();
        throw e instanceof MissingResourceError ? new ConfigError([e.message]) : e;
      }
      this.counters.lastError = (e as Error).message;
      this.log('warn', 'resource lookup failed, sampling anyway and retrying: ' + (e as Error).message);
      this.armLookup();
    }
    this.state = 'running';
    this.resources.admit(true);
    this.sampler.begin();
    this.uplink.begin();
    this.commands.begin();
    this.keepAlive.begin();
  }

  async stop(options: StopOptions = {}): Promise<AgentStats> {
    if (this.state === 'stopped' || this.state === 'stopping') return this.stats();
    const wasRunning = this.state === 'running';
    this.state = 'stopping';
    this.resources.admit(false);
    this.sampler.end();
    this.commands.end();
    this.keepAlive.end();
    if (this.lookupTimer !== null) this.host.clearTimer(this.lookupTimer);
    if (wasRunning && options.flush !== false && this.queue.length > 0) await this.drain(options.timeoutMs ?? DEFAULT_DRAIN_MS);
    this.uplink.end();
    // A request already sent still settles, so its acknowledgement reaches durable storage before it closes.
    await this.uplink.whenIdle();
    this.state = 'stopped';
    this.host.storage?.close?.();
    return this.stats();
  }

  flush(): Promise<boolean> {
    if (this.state !== 'running') return Promise.resolve(this.queue.length === 0);
    return this.uplink.flush();
  }

  record(resource: number, value: SampleValue): boolean {
    const known = this.known[resource], q = this.queue, j = q.tail;
    // The common case in few bytecodes, as XS interprets each one (nested ifs take fewer than &&): a
    // number its configured resource takes as it is, into a queue with room whose uplink needs no word of
    // it (the queue's fast lane). Everything else takes `intake`.
    if (typeof value === 'number') if (value >= known?.lo) if (value <= known.hi) if (j < q.limit) {
      q.tags[j] = known.tag;
      q.values[j] = value;
      q.ats[j] = this.host.now();
      q.tail = j + 1;
      return true;
    }
    return this.intake(resource, value);
  }

  canSleep(): boolean {
    return this.queue.length === 0 && this.lane.idle;
  }

  stats(): AgentStats {
    const c = this.counters;
    const oldest = this.queue.oldestAt();
    return {
      queued: this.queue.length,
      capacity: this.queue.capacity,
      highWater: this.queue.highWater,
      accepted: this.queue.end - this.restoredEnd,
      sent: c.sent,
      batches: c.batches,
      requests: c.requests,
      retries: c.retries,
      droppedOverflow: this.queue.droppedOverflow,
      rejectedInvalid: c.rejectedInvalid,
      setAside: c.setAside,
      ambiguous: c.ambiguous,
      commands: c.commands,
      commandErrors: c.commandErrors,
      storageErrors: c.storageErrors,
      oldestAgeMs: oldest < 0 ? -1 : this.host.now() - oldest,
      lastError: c.lastError === null ? null : this.scrub(c.lastError),
      authPaused: this.uplink.authPaused,
      batchLimit: this.uplink.batchLimit,
    };
  }

  /** Checks a reading and queues it, with every check and every report. Allocates nothing for a valid number or boolean. */
  private intake(resource: number, value: unknown): boolean {
    if (this.state !== 'running') return false;
    const known = this.known[resource];
    if (known === undefined) return this.invalid(resource, 'not a configured resource (list it under `resources`)');
    if (typeof value === 'number') {
      if (!isFinite(value)) return this.invalid(resource, 'value ' + String(value) + ' is not a finite number');
    } else if (typeof value !== 'boolean' && typeof value !== 'string') {
      return this.invalid(resource, 'value is ' + (value === null ? 'null' : 'a ' + typeof value) + ', not a number, boolean or string');
    }
    if (known.restriction) {
      const problem = checkInput(value, known.restriction);
      if (problem !== null) return this.invalid(resource, problem);
    }
    const seq = this.nextSeq;
    const result = this.queue.push(resource, value, this.host.now(), seq);
    if (result === DROPPED_NEW) return false;
    if (result === TOO_LARGE) return this.invalid(resource, 'string of ' + (value as string).length + ' characters is too large for the queue');
    this.nextSeq++;
    if (this.host.storage) {
      try {
        this.host.storage.append(seq, resource, value);
      } catch (e) {
        this.counters.storageErrors++;
        this.log('error', 'durable storage: ' + (e instanceof Error ? e.message : String(e)));
      }
    }
    if (result === PUSHED_EVICTED) {
      this.uplink.evicted();
      this.checkpoint();
    }
    this.uplink.queued();
    return true;
  }

  private invalid(resource: number, reason: string): false {
    this.counters.rejectedInvalid++;
    const message = 'resource ' + resource + ': ' + reason;
    this.counters.lastError = message;
    // A broken sensor repeats itself: warn once per resource, the rest at debug level.
    const first = !this.warned.has(resource);
    if (first) this.warned.add(resource);
    this.log(first ? 'warn' : 'debug', message);
    return false;
  }

  private setAside(resource: number, value: SampleValue, reason: string): void {
    this.log('warn', 'set aside a sample of resource ' + resource + ': ' + reason);
    const callback = this.config.onSetAside;
    if (callback === undefined) return;
    try {
      callback({ resource, value, reason: this.scrub(reason) });
    } catch (e) {
      this.log('error', 'onSetAside threw: ' + (e instanceof Error ? e.message : String(e)));
    }
  }

  /** Tells durable storage that every sample before the head of the queue is finished. */
  private checkpoint(): void {
    const storage = this.host.storage;
    if (storage === undefined) return;
    const done = this.queue.length > 0 ? this.queue.seqAt(0) - 1 : this.nextSeq - 1;
    if (done <= this.ackedSeq) return;
    try {
      storage.ack(done);
      this.ackedSeq = done;
    } catch (e) {
      this.counters.storageErrors++;
      this.log('error', 'durable storage: ' + (e instanceof Error ? e.message : String(e)));
    }
  }

  /** Puts back what durable storage kept from an earlier run, oldest first. */
  private restore(): void {
    const storage = this.host.storage;
    if (storage === undefined) return;
    const now = this.host.now();
    let restored = 0;
    let first = -1;
    this.nextSeq = storage.load((seq, resource, value) => {
      if (first < 0) first = seq;
      const result = this.queue.push(resource, value, now, seq);
      if (result === PUSHED_EVICTED) this.uplink.evicted();
      if (result !== DROPPED_NEW && result !== TOO_LARGE) restored++;
    });
    this.restoredEnd = this.queue.end;
    this.ackedSeq = first < 0 ? this.nextSeq - 1 : first - 1;
    if (restored > 0) this.log('info', 'restored ' + restored + ' unacknowledged samples from durable storage');
    this.checkpoint();
  }

  private async lookup(): Promise<void> {
    if (this.state !== 'running') return;
    this.counters.requests++;
    try {
      await this.resources.lookup(this.client, (m) => this.log('warn', m));
      this.learnt();
      this.log('info', 'resource lookup succeeded');
    } catch (e) {
      this.counters.lastError = (e as Error).message;
      this.log(e instanceof MissingResourceError ? 'error' : 'warn', 'resource lookup: ' + (e as Error).message);
      if (!(e instanceof MissingResourceError)) this.armLookup();
    }
  }

  private armLookup(): void {
    this.lookupTimer = this.host.setTimer(this.config.lookupRetryMs ?? DEFAULT_LOOKUP_RETRY_MS, () => {
      this.lookupTimer = null;
      this.lane.want(this.lookupJob);
    });
  }

  /** The lookup succeeded: presence was refreshed, and the keep-alive follows the resources' lifetime. */
  private learnt(): void {
    this.resources.admit(this.state === 'running');
    this.keepAlive.seen();
    if (this.config.keepAliveMs === undefined && this.resources.shortestLifetimeMin > 0) {
      this.keepAlive.intervalMs = (this.resources.shortestLifetimeMin * 60_000) / 2;
    }
  }

  private drain(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.host.setTimer(timeoutMs, () => {
        this.log('warn', 'stop: drain timed out with ' + this.queue.length + ' samples queued');
        resolve();
      });
      void this.uplink.drain().then(() => {
        this.host.clearTimer(timer);
        resolve();
      });
    });
  }

  private log(level: LogLevel, message: string): void {
    this.host.log?.(level, this.scrub(message));
  }

  /** No message leaves the agent with the token in it. */
  private scrub(text: string): string {
    const token = this.config.token;
    return token.length >= 4 && text.indexOf(token) >= 0 ? text.split(token).join('[token]') : text;
  }
}
