// The agent: samples sensors into the fixed-memory queue, flushes it through the uplink, polls commands,
// keeps presence alive. It owns the order of start and stop and is the only place parts meet.
import type { Host, LogLevel, QueueStorage, SampleValue } from './host';
import type { AgentConfig } from './config';
import { checkConfig, ConfigError, DEFAULT_KEEP_ALIVE_MS, DEFAULT_LOOKUP_RETRY_MS, uplinkSettings } from './config';
import { FeedClient } from './client';
import { FeedError, errorText, redact } from './errors';
import { Commands } from './commands';
import type { Counters } from './counters';
import { createCounters } from './counters';
import { KeepAlive } from './keepalive';
import { Lane } from './lane';
import type { Job } from './lane';
import { DROPPED_NEW, PUSHED_EVICTED, SampleQueue, TOO_LARGE } from './queue';
import { createRandom } from './random';
import { Reconciler } from './reconcile';
import { MissingResourceError, Resources } from './resources';
import type { Known } from './resources';
import type { Resource } from './wire';
import { Sampler } from './sampler';
import { Uplink } from './uplink';
import { checkInput } from './validate';
import { Vanished } from './vanished';

/** The agent's counts: its running totals (`Counters`) and the state of its queue and uplink. */
export interface AgentStats extends Counters {
  queued: number;
  capacity: number;
  highWater: number;
  /** Samples that passed the checks and entered the queue in this run. */
  accepted: number;
  /** Samples lost to a full queue, counted exactly. */
  droppedOverflow: number;
  /** Age of the oldest queued sample in ms; -1 when the queue is empty. */
  oldestAgeMs: number;
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
   * sampling, flushing and polling. Rejects with a ConfigError naming unknown ids, or with the FeedError
   * of an answer not worth retrying (a refused token, another 4xx). If the service cannot be reached, it
   * starts anyway and retries the lookup.
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
  /**
   * Writes every queued sample that durable storage does not hold yet, in one burst, and returns how
   * many. Call it before deep sleep when the storage writes only when needed (`QueueStorage.spillEvery`);
   * with any other storage there is nothing to write but a sample whose append failed last, and with none
   * nothing at all.
   */
  persist(): number;
}

const DEFAULT_DRAIN_MS = 30_000;

export function createAgent(host: Host, config: AgentConfig): Agent {
  return new FeedAgent(host, checkConfig(config));
}

class FeedAgent implements Agent {
  private readonly counters_: Counters = createCounters();
  private readonly queue_: SampleQueue;
  private readonly client_: FeedClient;
  private readonly resources_: Resources;
  /** `resources.byId_`: an object, as XS reads a property in fewer bytecodes than it calls Map.get. */
  private readonly known_: Record<number, Known>;
  private readonly sampler_: Sampler;
  private readonly uplink_: Uplink;
  private readonly reconciler_: Reconciler;
  private readonly vanished_: Vanished;
  private readonly commands_: Commands;
  private readonly keepAlive_: KeepAlive;
  private readonly lookupJob_: Job;
  private readonly lane_: Lane;
  private readonly warned_ = new Set<number>();
  private state_: 'new' | 'running' | 'stopping' | 'stopped' = 'new';
  /** Sequence numbers matter to durable storage only, whose samples all take `intake_`. */
  private nextSeq_ = 0;
  /** `queue.end` once durable storage was restored: every later position is a sample accepted by this run. */
  private restoredEnd_ = 0;
  private ackedSeq_ = -1;
  /** Queue position up to which durable storage holds the samples (`end` while it writes every sample). */
  private storedEnd_ = 0;
  /** Sequence number of the newest sample in durable storage; -1 when none. */
  private lastStoredSeq_ = -1;
  /** `QueueStorage.spillEvery`, or 0 for a storage that takes every sample as it is accepted. */
  private readonly spillEvery_: number;
  /** No burst before this queue position: each attempt, written or failed, moves it `spillEvery_` on. */
  private nextSpillAt_ = 0;
  /** The uplink said a request failed and none was acknowledged since: storage that writes when needed writes. */
  private failing_ = false;
  private lookupTimer_: unknown = null;

  constructor(
    private readonly host_: Host,
    private readonly config_: AgentConfig,
  ) {
    const s = uplinkSettings(config_);
    this.spillEvery_ = host_.storage?.spillEvery ?? 0;
    const sensors = config_.sensors ?? [];
    const actuators = config_.actuators ?? [];
    this.queue_ = new SampleQueue({ capacity: s.queue, overflow: s.overflow, stringBytes: s.stringBytes, withSeq: host_.storage !== undefined });
    // Every request of every part passes here: the one place that counts them.
    this.client_ = new FeedClient((req) => (this.counters_.requests++, host_.request(req)), {
      baseUrl: config_.url,
      publicKey: config_.publicKey,
      token: config_.token,
      timeoutMs: s.timeoutMs,
    });
    const ids: number[] = [];
    for (const id of [...sensors.map((x) => x.resource), ...actuators.map((x) => x.resource), ...(config_.resources ?? [])]) {
      if (ids.indexOf(id) < 0) ids.push(id);
    }
    this.resources_ = new Resources(ids, (id) => this.queue_.numberTag(id));
    this.known_ = this.resources_.byId_;
    const random = createRandom(config_.seed ?? Math.floor(Math.random() * 4294967296));
    const report = (level: LogLevel, message: string): void => this.log_(level, message);
    // An actuator's resource has another writer, the platform: a read-back there decides nothing.
    this.reconciler_ = new Reconciler(s.reconcile ? ids.filter((id) => !actuators.some((a) => a.resource === id)) : []);
    this.vanished_ = new Vanished(host_, this.client_, this.resources_, report, () => this.lane_.want(this.vanished_));
    this.uplink_ = new Uplink(host_, this.client_, this.queue_, s, this.counters_, random, {
      setAside: (resource, value, reason, quiet) => this.setAside_(resource, value, reason, quiet),
      departed: () => this.checkpoint_(),
      presence: () => this.keepAlive_.seen_(),
      failing: (failing) => {
        this.failing_ = failing;
      },
      report,
    }, () => this.lane_.want(this.uplink_), this.reconciler_, this.vanished_);
    this.commands_ = new Commands(host_, actuators, this.client_, this.resources_, this.counters_, report, () => this.lane_.want(this.commands_));
    this.keepAlive_ = new KeepAlive(host_, this.client_, ids, this.counters_, report, () => this.lane_.want(this.keepAlive_),
      config_.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS);
    this.lookupJob_ = { wanted: false, run: () => this.lookup_() };
    // Turns in this order: the lookup gates validation; batches and command polls alternate.
    this.lane_ = new Lane([this.lookupJob_, this.uplink_, this.commands_, this.keepAlive_, this.vanished_]);
    this.sampler_ = new Sampler(host_, sensors, {
      sample_: (i, value) => {
        this.record(sensors[i].resource, value as SampleValue);
      },
      readFailed_: (i, e) => this.invalid_(sensors[i].resource, 'read failed: ' + errorText(e)),
    });
  }

  async start(): Promise<void> {
    if (this.state_ !== 'new') throw new Error('the agent was started already');
    this.restore_();
    const failure = await this.lookupOnce_();
    if (failure instanceof MissingResourceError || (failure instanceof FeedError && !failure.retryable)) {
      this.state_ = 'stopped';
      this.host_.storage?.close?.();
      throw failure instanceof MissingResourceError ? new ConfigError([failure.message]) : failure;
    }
    if (failure !== null) {
      this.log_('warn', 'resource lookup failed, sampling anyway and retrying: ' + errorText(failure));
      this.armLookup_();
    }
    this.state_ = 'running';
    this.resources_.admit_(true);
    this.sampler_.begin_();
    this.uplink_.begin();
    this.commands_.begin();
    this.keepAlive_.begin_();
    this.vanished_.begin();
  }

  async stop(options: StopOptions = {}): Promise<AgentStats> {
    if (this.state_ === 'stopped' || this.state_ === 'stopping') return this.stats();
    const wasRunning = this.state_ === 'running';
    this.state_ = 'stopping';
    this.resources_.admit_(false);
    this.sampler_.end_();
    this.commands_.end();
    this.keepAlive_.end_();
    this.vanished_.end();
    if (this.lookupTimer_ !== null) this.host_.clearTimer(this.lookupTimer_);
    if (wasRunning && options.flush !== false && this.queue_.length > 0) await this.drain_(options.timeoutMs ?? DEFAULT_DRAIN_MS);
    this.uplink_.end();
    // A request already sent still settles, so its acknowledgement reaches durable storage before it closes.
    await this.uplink_.whenIdle();
    this.persist();
    this.state_ = 'stopped';
    this.host_.storage?.close?.();
    return this.stats();
  }

  flush(): Promise<boolean> {
    if (this.state_ !== 'running') return Promise.resolve(this.queue_.length === 0);
    return this.uplink_.flush();
  }

  record(resource: number, value: SampleValue): boolean {
    const known = this.known_[resource];
    // The common case in few bytecodes, as XS interprets each one (nested ifs take fewer than &&): a
    // number its configured resource takes as it is, into a queue with room whose uplink needs no word of
    // it (the queue's fast lane). Everything else takes `intake_`.
    if (typeof value === 'number') if (value >= known?.lo_) if (value <= known.hi_) if (this.queue_.pushNumber(known.tag_, value, this.host_.now())) return true;
    return this.intake_(resource, value);
  }

  canSleep(): boolean {
    return this.queue_.length === 0 && this.lane_.idle;
  }

  persist(): number {
    const q = this.queue_;
    const first = q.end - q.length;
    const from = this.unstoredFrom_();
    if (this.host_.storage === undefined || from === q.end) return 0;
    this.nextSpillAt_ = q.end + this.spillEvery_;
    // Acknowledgements first: an eviction's wait here (see keep_), so the burst covers them.
    this.checkpoint_();
    let written = 0;
    this.store_((storage) => {
      for (let i = from - first; i < q.length; i++) storage.append(q.seqAt(i), q.resourceAt(i), q.valueAt(i));
      storage.commit?.();
      this.storedEnd_ = q.end;
      this.lastStoredSeq_ = q.seqAt(q.length - 1);
      written = q.end - from;
    });
    return written;
  }

  stats(): AgentStats {
    const c = this.counters_;
    const oldest = this.queue_.oldestAt();
    return {
      queued: this.queue_.length,
      capacity: this.queue_.capacity,
      highWater: this.queue_.highWater,
      accepted: this.queue_.end - this.restoredEnd_,
      droppedOverflow: this.queue_.droppedOverflow,
      ...c,
      oldestAgeMs: oldest < 0 ? -1 : this.host_.now() - oldest,
      lastError: c.lastError === null ? null : this.scrub_(c.lastError),
      authPaused: this.uplink_.authPaused,
      batchLimit: this.uplink_.batchLimit,
    };
  }

  /** Checks a reading and queues it, with every check and every report. Allocates nothing for a valid number or boolean. */
  private intake_(resource: number, value: unknown): boolean {
    if (this.state_ !== 'running') return false;
    const known = this.known_[resource];
    if (known === undefined) return this.invalid_(resource, 'not a configured resource (list it under `resources`)');
    if (typeof value === 'number') {
      if (!isFinite(value)) return this.invalid_(resource, 'value ' + String(value) + ' is not a finite number');
    } else if (typeof value !== 'boolean' && typeof value !== 'string') {
      return this.invalid_(resource, 'value is ' + (value === null ? 'null' : 'a ' + typeof value) + ', not a number, boolean or string');
    }
    if (known.gone_) {
      // Reported once, when the service said so (vanished.ts); counted and handed over per sample.
      this.counters_.setAside++;
      this.setAside_(resource, value as SampleValue, 'resource ' + resource + ' is gone', true);
      return false;
    }
    if (known.restriction_) {
      const problem = checkInput(value, known.restriction_);
      if (problem !== null) return this.invalid_(resource, problem);
    }
    const seq = this.nextSeq_;
    const result = this.queue_.push(resource, value, this.host_.now(), seq);
    if (result === DROPPED_NEW) return false;
    if (result === TOO_LARGE) return this.invalid_(resource, 'string of ' + (value as string).length + ' characters is too large for the queue');
    this.nextSeq_++;
    if (this.host_.storage !== undefined) this.keep_(seq, resource, value, result === PUSHED_EVICTED);
    this.uplink_.queued();
    return true;
  }

  /**
   * Durable storage's part of accepting a sample: a storage of every sample writes it now (and learns of
   * an eviction at once); one that writes when needed waits for a failed flush and `spillEvery` unwritten
   * samples, and learns of evictions with the next burst, so that a full queue does not write per sample.
   */
  private keep_(seq: number, resource: number, value: SampleValue, evicted: boolean): void {
    if (this.spillEvery_ === 0) {
      this.store_((storage) => {
        storage.append(seq, resource, value);
        this.storedEnd_ = this.queue_.end;
        this.lastStoredSeq_ = seq;
      });
      if (evicted) this.checkpoint_();
    } else if (this.failing_ && this.queue_.end >= this.nextSpillAt_ && this.queue_.end - this.unstoredFrom_() >= this.spillEvery_) {
      this.persist();
    }
  }

  /** The first queue position durable storage does not hold: what a burst would write from. */
  private unstoredFrom_(): number {
    return Math.max(this.storedEnd_, this.queue_.end - this.queue_.length);
  }

  private invalid_(resource: number, reason: string): false {
    this.counters_.rejectedInvalid++;
    const message = 'resource ' + resource + ': ' + reason;
    this.counters_.lastError = message;
    // A broken sensor repeats itself: warn once per resource, the rest at debug level.
    const first = !this.warned_.has(resource);
    if (first) this.warned_.add(resource);
    this.log_(first ? 'warn' : 'debug', message);
    return false;
  }

  private setAside_(resource: number, value: SampleValue, reason: string, quiet: boolean): void {
    if (!quiet) this.log_('warn', 'set aside a sample of resource ' + resource + ': ' + reason);
    const callback = this.config_.onSetAside;
    if (callback === undefined) return;
    try {
      callback({ resource, value, reason: this.scrub_(reason) });
    } catch (e) {
      this.log_('error', 'onSetAside threw: ' + errorText(e));
    }
  }

  /** Tells durable storage that every sample it holds before the head of the queue is finished. */
  private checkpoint_(): void {
    if (this.host_.storage === undefined) return;
    // Past the newest stored sample there is nothing to acknowledge: no write for samples it never held.
    const done = Math.min(this.queue_.length > 0 ? this.queue_.seqAt(0) - 1 : this.nextSeq_ - 1, this.lastStoredSeq_);
    if (done <= this.ackedSeq_) return;
    this.store_((storage) => {
      storage.ack(done);
      this.ackedSeq_ = done;
    });
  }

  /** A write to durable storage; a failure is counted and logged, and the sample stays queued in memory. */
  private store_(write: (storage: QueueStorage) => void): void {
    try {
      write(this.host_.storage as QueueStorage);
    } catch (e) {
      this.counters_.storageErrors++;
      this.log_('error', 'durable storage: ' + errorText(e));
    }
  }

  /** Puts back what durable storage kept from an earlier run, oldest first. */
  private restore_(): void {
    const storage = this.host_.storage;
    if (storage === undefined) return;
    const now = this.host_.now();
    let restored = 0;
    let first = -1;
    this.nextSeq_ = storage.load((seq, resource, value) => {
      if (first < 0) first = seq;
      const result = this.queue_.push(resource, value, now, seq);
      if (result !== DROPPED_NEW && result !== TOO_LARGE) restored++;
    });
    this.restoredEnd_ = this.queue_.end;
    this.storedEnd_ = this.queue_.end;
    this.lastStoredSeq_ = this.nextSeq_ - 1;
    this.ackedSeq_ = first < 0 ? this.nextSeq_ - 1 : first - 1;
    if (restored > 0) this.log_('info', 'restored ' + restored + ' unacknowledged samples from durable storage');
    this.checkpoint_();
  }

  /** The lookup job, after a start that could not reach the service: retried until it is answered. */
  private async lookup_(): Promise<void> {
    if (this.state_ !== 'running') return;
    const failure = await this.lookupOnce_();
    if (failure === null) {
      this.log_('info', 'resource lookup succeeded');
      return;
    }
    const missing = failure instanceof MissingResourceError;
    this.log_(missing ? 'error' : 'warn', 'resource lookup: ' + errorText(failure));
    if (!missing) this.armLookup_();
  }

  /** Reads the resources once: null when that succeeded, else what failed (kept as the last error). */
  private async lookupOnce_(): Promise<unknown> {
    try {
      this.learnt_(await this.resources_.lookup_(this.client_, (m) => this.log_('warn', m)));
      return null;
    } catch (e) {
      this.counters_.lastError = errorText(e);
      return e;
    }
  }

  private armLookup_(): void {
    this.lookupTimer_ = this.host_.setTimer(this.config_.lookupRetryMs ?? DEFAULT_LOOKUP_RETRY_MS, () => {
      this.lookupTimer_ = null;
      this.lane_.want(this.lookupJob_);
    });
  }

  /**
   * The lookup succeeded: presence was refreshed, the keep-alive follows the resources' lifetime, and
   * their last feeds are where reconciliation starts from.
   */
  private learnt_(records: readonly Resource[]): void {
    this.reconciler_.looked(records);
    this.resources_.admit_(this.state_ === 'running');
    this.keepAlive_.seen_();
    if (this.config_.keepAliveMs === undefined && this.resources_.shortestLifetimeMin_ > 0) {
      this.keepAlive_.intervalMs_ = (this.resources_.shortestLifetimeMin_ * 60_000) / 2;
    }
  }

  private drain_(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.host_.setTimer(timeoutMs, () => {
        this.log_('warn', 'stop: drain timed out with ' + this.queue_.length + ' samples queued');
        resolve();
      });
      void this.uplink_.drain().then(() => {
        this.host_.clearTimer(timer);
        resolve();
      });
    });
  }

  private log_(level: LogLevel, message: string): void {
    this.host_.log?.(level, this.scrub_(message));
  }

  /** No message leaves the agent with the token in it (nor any bearer credential). */
  private scrub_(text: string): string {
    return redact(text, this.config_.token);
  }
}
