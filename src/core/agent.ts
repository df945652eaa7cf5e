// The agent: takes readings into its queue (a ring of typed arrays, fixed on the device, growing and shrinking
// in memory a host lends), flushes it through the uplink, polls commands, keeps presence alive. It makes the
// parts, hands each what it needs, and owns the order of start and stop.
import type { Host, Log, SampleValue } from './host/host';
import type { AgentConfig } from './config';
import { checkConfig, ConfigError, DEFAULT_PRESENCE_MS, DEFAULT_LOOKUP_RETRY_MS, uplinkSettings } from './config';
import { FeedClient } from './wire/client';
import { FeedError, isAuthError, redact } from './wire/errors';
import { Commands } from './resources/commands';
import type { Counters } from './host/counters';
import { createCounters } from './host/counters';
import { Head } from './delivery/head';
import { Intake } from './intake/intake';
import type { RecordResult } from './intake/intake';
import { Lookup } from './resources/lookup';
import { Lane } from './requests/lane';
import { scrubbedLog } from './wire/log';
import { Presence } from './resources/presence';
import { FailureReport, RetryLadder } from './requests/retry-ladder';
import { SampleQueue } from './queue/queue';
import { createRandom } from './host/random';
import { Reconciler } from './delivery/reconcile';
import type { Reporting } from './intake/report';
import { MissingResourceError, Resources } from './resources/resources';
import type { Known } from './resources/resources';
import { Sampler } from './intake/sampler';
import { SetAsides } from './delivery/set-aside';
import { StoredQueue } from './queue/stored-queue';
import { Uplink } from './delivery/uplink';
import { Vanished } from './delivery/vanished';

export type { RecordResult } from './intake/intake';

/** The agent's counts: its running totals (`Counters`) and the state of its queue and uplink. */
export interface AgentStats extends Counters {
  /** HTTP requests made, of every kind (counted where the client hands them to the host). */
  requests: number;
  /** Samples waiting to be delivered: in the queue in memory, and in the storage's backlog. */
  queued: number;
  /** Of those, the samples held in storage only, beyond the queue in memory (a storage that holds a backlog). */
  backlog: number;
  /** The queue's capacity in memory. */
  capacity: number;
  highWater: number;
  /** Samples that passed the checks and entered the queue in this run. */
  accepted: number;
  /**
   * Samples lost to a full queue, counted exactly: evicted (drop-oldest) or refused as full (drop-newest);
   * with a backlog, only at the storage's bound.
   */
  droppedOverflow: number;
  /** Age of the oldest queued sample in ms; null when the queue is empty. */
  oldestAgeMs: number | null;
  /** The service refuses the token: nothing is sent until it accepts it again. */
  authPaused: boolean;
  /**
   * Samples report by exception (`reporting`) held back rather than queued when they came: a later report
   * (the newest value after a minimum interval, an aggregate, a heartbeat) stood for them.
   */
  heldBack: number;
  /** Current batch size (halved by 413 answers). */
  batchLimit: number;
  /** `setAside` per resource id (a gone resource's readings, refused elements), for the resources with any. */
  setAsideBy: Record<number, number>;
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
   * starts anyway and retries the lookup. A stop() while the lookup is out wins: start() then resolves
   * without starting anything.
   */
  start(): Promise<void>;
  stop(options?: StopOptions): Promise<AgentStats>;
  /** Sends what is queued now; true once all of it has left the queue, false at the first failure. */
  flush(): Promise<boolean>;
  /**
   * Queues one reading by hand for a configured resource, with the same checks as a sensor's. Returns
   * `queued`; `full` when there is no room (the queue in memory, or the storage's backlog at its bound;
   * `whenRoom()` says when to offer it again); or `refused`, an invalid reading (`lastRefusal` says why)
   * or an agent that is not running.
   */
  record(resource: number, value: SampleValue): RecordResult;
  /**
   * Resolves when a reading `record()` found `full` may be offered again: after samples left the queue,
   * or when the agent stops. There may still be no room then: offer it, and wait again.
   */
  whenRoom(): Promise<void>;
  /** Why the last reading `record()` refused was refused. */
  readonly lastRefusal: string | null;
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
  private readonly counters: Counters = createCounters();
  private readonly log: Log;
  private readonly queue: SampleQueue;
  private readonly head: Head;
  private readonly stored: StoredQueue;
  private readonly client: FeedClient;
  private readonly resources: Resources;
  /** `resources.byId`: an object, as XS reads a property in fewer bytecodes than it calls Map.get. */
  private readonly known: Record<number, Known>;
  private readonly intake: Intake;
  /** Null without rules; the sampler without sensors and the commands without actuators (a gateway's devices): no state for nothing. */
  private readonly reporting: Reporting | null;
  private readonly reconciler: Reconciler;
  private readonly setAsides: SetAsides;
  private readonly lane: Lane;
  private readonly uplink: Uplink;
  private readonly commands: Commands | null;
  private readonly presence: Presence;
  private readonly lookup: Lookup;
  private readonly sampler: Sampler | null;
  private state: 'new' | 'running' | 'stopping' | 'stopped' = 'new';

  // Each part is handed what it needs, and none is handed the agent or a way back into it: the agent
  // calls into its parts, the parts call into the parts below them (docs/architecture.md, "The parts").
  constructor(
    private readonly host: Host,
    private readonly config: AgentConfig,
  ) {
    const s = uplinkSettings(config);
    const sensors = config.sensors ?? [];
    const actuators = config.actuators ?? [];
    const counters = this.counters;
    const lane = (this.lane = new Lane(host));
    const log = (this.log = scrubbedLog(host, config.token));
    const queue = (this.queue = new SampleQueue({ capacity: s.queue, overflow: s.overflow, stringBytes: s.stringBytes, withSeq: host.storage !== undefined, clock: host, memory: host.memory }));
    const head = (this.head = new Head({ queue, settings: s }));
    const client = (this.client = new FeedClient(host.request.bind(host), { baseUrl: config.url, publicKey: config.publicKey, token: config.token, timeoutMs: s.timeoutMs }));
    const ids: number[] = [];
    for (const id of [...sensors.map((x) => x.resource), ...actuators.map((x) => x.resource), ...(config.resources ?? [])]) {
      if (ids.indexOf(id) < 0) ids.push(id);
    }
    const rules = config.reporting ?? [];
    const resources = (this.resources = new Resources(ids, queue, rules.map((r) => r.resource)));
    const known = (this.known = resources.byId);
    const random = createRandom(config.seed ?? Math.floor(Math.random() * 4294967296));
    // An actuator's resource has another writer, the platform: a read-back there decides nothing.
    const reconciler = (this.reconciler = new Reconciler({ ids: s.reconcile ? ids.filter((id) => !actuators.some((a) => a.resource === id)) : [], head }));
    const stored = (this.stored = new StoredQueue({ storage: host.storage, queue, overflow: s.overflow, counters, log, head, reconciler }));
    const setAsides = (this.setAsides = new SetAsides({ counters, log, onSetAside: config.onSetAside, scrub: (text) => redact(text, config.token) }));
    // Every retry ladder draws from the one backoff, and says its endpoint's state once (retry-ladder.ts).
    const backoff = Object.freeze({ baseMs: s.backoffBaseMs, capMs: s.backoffCapMs });
    const ladder = (name: string, settings = backoff): RetryLadder => new RetryLadder(settings, new FailureReport(name, log), random);
    const presence = (this.presence = new Presence({ host, client, ids, counters, lane, intervalMs: config.presenceMs ?? DEFAULT_PRESENCE_MS, ladder: ladder('presence read') }));
    const vanished = new Vanished({ host, client, resources, log, random });
    const uplink = (this.uplink = new Uplink({ host, client, queue, head, clock: s.sendAge ? host : null, stored, reconciler, vanished, setAsides, presence, settings: s, counters, random, lane, log }));
    const intake = (this.intake = new Intake({ host, rules, known, sensors, stored, uplink, setAsides, counters, log }));
    this.reporting = intake.reporting;
    this.commands = actuators.length === 0 ? null : new Commands({ host, actuators, client, resources, counters, log, lane, ladder: ladder('command poll') });
    const lookup = (this.lookup = new Lookup({ host, client, resources, reconciler, presence, presenceSet: config.presenceMs !== undefined, counters, log, lane,
      ladder: ladder('resource lookup', { baseMs: s.backoffBaseMs, capMs: config.lookupRetryMs ?? DEFAULT_LOOKUP_RETRY_MS }) }));
    // Turns in this order: the lookup gates validation; batches and command polls alternate.
    lane.serve(this.commands === null ? [lookup, uplink, presence] : [lookup, uplink, this.commands, presence]);
    this.sampler = sensors.length === 0 ? null : new Sampler(host, sensors, intake);
  }

  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error('the agent was started already');
    const out = this.stored.restore();
    // Before the lookup: its answer must not replace the baselines the batch's read-back compares with.
    if (out !== null) {
      this.reconciler.assume(out);
      this.uplink.resume(out.count);
    }
    // The lookup is a request: a host that paces its agents grants it a turn first.
    if (this.host.turn !== undefined) await this.host.turn();
    const failure = await this.lookup.once();
    // stop() came while the lookup was out, and has closed what start() opened.
    if (this.state !== 'new') return;
    const held = this.config.holdOnRefusedToken === true && isAuthError(failure);
    if (failure instanceof MissingResourceError || (failure instanceof FeedError && !failure.retryable && !held)) {
      this.state = 'stopped';
      this.host.storage?.close?.();
      throw failure instanceof MissingResourceError ? new ConfigError([failure.message]) : failure;
    }
    if (failure !== null) {
      this.log('info', 'starting without the resources\' restrictions: sampling anyway, and looking them up again');
      this.lookup.retry(failure);
    }
    this.state = 'running';
    this.lookup.running = true;
    this.intake.open = true;
    this.resources.admit(true);
    this.reporting?.begin();
    this.sampler?.begin();
    this.uplink.begin();
    this.commands?.begin();
    this.presence.begin();
  }

  async stop(options: StopOptions = {}): Promise<AgentStats> {
    if (this.state === 'stopped' || this.state === 'stopping') return this.stats();
    const wasRunning = this.state === 'running';
    this.state = 'stopping';
    this.intake.open = false;
    this.resources.admit(false);
    this.sampler?.end();
    // A change held back for its minimum interval is queued now, to be delivered with the rest.
    this.reporting?.end();
    this.commands?.end();
    this.presence.end();
    this.lookup.end();
    // A resource suspected gone is still looked up while the queue drains: its samples wait for that.
    if (wasRunning && options.flush !== false && this.queue.length > 0) await this.drain(options.timeoutMs ?? DEFAULT_DRAIN_MS);
    this.uplink.end();
    // A request already sent still settles, so its acknowledgement reaches durable storage before it closes.
    await this.uplink.whenIdle();
    this.persist();
    this.state = 'stopped';
    this.host.storage?.close?.();
    this.stored.room.wake();
    return this.stats();
  }

  flush(): Promise<boolean> {
    if (this.state !== 'running') return Promise.resolve(this.queue.length === 0);
    return this.uplink.flush();
  }

  record(resource: number, value: SampleValue): RecordResult {
    const known = this.known[resource];
    // The common case in few bytecodes, as XS interprets each one (nested ifs take fewer than &&): a
    // number its configured resource takes as it is, into a queue with room whose uplink needs no word of
    // it (the queue's fast lane). Everything else takes `intake`.
    if (typeof value === 'number') if (value >= known?.lo) if (value <= known.hi) if (this.queue.pushNumber(known.tag, value)) return 'queued';
    return this.intake.record(resource, value);
  }

  get lastRefusal(): string | null {
    return this.intake.lastRefusal;
  }

  whenRoom(): Promise<void> {
    return this.state === 'stopped' ? Promise.resolve() : this.stored.room.wait();
  }

  canSleep(): boolean {
    return this.queue.length === 0 && this.stored.backlog === 0 && this.lane.idle;
  }

  persist(): number {
    return this.stored.persist();
  }

  stats(): AgentStats {
    const c = this.counters;
    const oldest = this.queue.oldestAt();
    const backlog = this.stored.backlog;
    return {
      queued: this.queue.length + backlog,
      backlog,
      capacity: this.queue.capacity,
      highWater: this.queue.highWater,
      accepted: this.stored.accepted,
      droppedOverflow: this.queue.droppedOverflow + this.stored.dropped,
      ...c,
      oldestAgeMs: oldest < 0 ? null : this.host.now() - oldest,
      requests: this.client.requests,
      lastError: c.lastError === null ? null : redact(c.lastError, this.config.token),
      authPaused: this.head.authRefused,
      batchLimit: this.head.limit,
      heldBack: this.reporting?.heldBack ?? 0,
      setAsideBy: { ...this.setAsides.by },
    };
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
}
