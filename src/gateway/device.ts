// One service device behind the gateway: its agent, its durable queue, its overflow on disk, and its
// presence, which follows the field device. Readings come in through `offer` (from MQTT or Modbus);
// commands go out through the agent's actuators to what the gateway wires in (`CommandWriter`).
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { createAgent } from '../core/agent';
import type { Agent, AgentStats } from '../core/agent';
import type { ActuatorConfig } from '../core/config';
import type { Host, HttpRequest, LogLevel, SampleValue } from '../core/host';
import { createNodeHost } from '../../platforms/node/host';
import { openDurableQueue } from '../../platforms/node/durable-queue';
import type { DeviceConfig, GatewayConfig } from './config';
import { Once } from './once';
import { Overflow } from './overflow';
import type { RequestFn } from './pacing';

/**
 * What became of a reading offered to a device: 'stored' in its queue or its overflow (written to the
 * OS either way); 'full': neither had room, nothing was kept.
 */
export type Offer = 'stored' | 'full' | 'not-running' | { refused: string };

export interface DeviceStats {
  name: string;
  publicKey: string;
  /** starting, running, stopped, or failed (the service refused its config: resources it does not have). */
  state: 'starting' | 'running' | 'stopping' | 'stopped' | 'failed';
  /** Presence is kept alive: a source was heard within `silenceS`, and no last will came since. */
  present: boolean;
  queued: number;
  /** Readings in its overflow on disk, waiting for room in the queue (docs/gateway.md, "A full queue"). */
  overflow: number;
  /** Readings queued (and written to the durable queue) in this run. */
  accepted: number;
  /**
   * Readings the durable queue gave back at start (not acknowledged by the service before the last
   * stop or kill): sent again, so those of a batch the service stored just before a kill are stored
   * twice (README, Guarantees, "Duplicates").
   */
  restored: number;
  delivered: number;
  setAside: number;
  /** Readings that could not be kept and are gone: a Modbus reading while the queue and the overflow were full. */
  lost: number;
  /** Readings refused before queuing (outside the subtype's range, not of its pattern). */
  refused: number;
  /** Age of the oldest queued reading in ms; null when none. */
  oldestAgeMs: number | null;
  /** The service refuses the token: this device sends nothing until it is accepted again. */
  authPaused: boolean;
  /** Writes to its durable queue that failed (a full disk): those readings live in memory only. */
  storageErrors: number;
  /** Commands applied to the field, and those that failed or timed out (30 s). */
  commands: number;
  commandErrors: number;
  /** Samples sent again without knowing whether the service had stored them (README, Guarantees). */
  unresolved: number;
  lastError: string | null;
}

/** Sends an actuator's new value to the field; resolves once the field has it (a PUBACK, a write answered). */
export type CommandWriter = (value: SampleValue) => Promise<void>;

/** While the service refuses a device's token, it is tried again this often (a fixed token counts soon). */
const AUTH_RETRY_MS = 60_000;
/** While the overflow holds readings, the queue is looked at this often for room to feed them into. */
const FEED_MS = 50;

export class GatewayDevice {
  private readonly agent: Agent;
  private state: DeviceStats['state'] = 'starting';
  private heardAt = performance.now();
  /** The queue's `droppedOverflow` as last seen: it tells a full queue from a refused reading. */
  private dropped = 0;
  /** Readings neither the queue nor the overflow could take, which will not come again. */
  private lost = 0;
  private readonly overflowDir: string;
  /** Opened when the queue first turns a reading away, or at start when an earlier run left readings in it. */
  private overflow: Overflow | null = null;
  private feeder: ReturnType<typeof setInterval> | null = null;
  private overflowFailed = false;
  /** What the overflow logs, once per device. */
  private readonly once: Once;
  private hurrying = false;
  private readonly queueSettings: GatewayConfig['queue'];
  private present = true;
  private restored = 0;
  private finalStats: AgentStats | null = null;

  constructor(
    readonly config: DeviceConfig,
    gateway: Pick<GatewayConfig, 'queue' | 'service'>,
    request: RequestFn,
    private readonly log: (line: string) => void,
    writerFor: (resource: number) => CommandWriter,
  ) {
    this.queueSettings = gateway.queue;
    this.once = new Once(log);
    this.overflowDir = join(gateway.queue.dir, config.publicKey, 'overflow');
    const storage = openDurableQueue(join(gateway.queue.dir, config.publicKey), { fsync: gateway.queue.fsync, fsyncIntervalMs: gateway.queue.fsyncIntervalMs });
    const node = createNodeHost({ storage, log: (level, message) => this.agentLog(level, message) });
    // While the field device is silent, every request says `silent=true`: its queue still drains, and
    // the platform lets its presence lapse.
    const host: Host = { ...node, request: (req) => request(this.present ? req : silenced(req)) };
    const actuators: ActuatorConfig[] = [];
    for (const r of config.resources) {
      if (r.command === undefined) continue;
      const send = writerFor(r.id);
      actuators.push({
        resource: r.id,
        every: r.command.everyMs,
        handle: async (value) => {
          await send(value);
          this.log(`${config.name}: resource ${r.id}: command ${JSON.stringify(value)} sent to the field`);
        },
      });
    }
    this.agent = createAgent(host, {
      url: gateway.service.url,
      publicKey: config.publicKey,
      token: config.token,
      resources: config.resources.filter((r) => r.command === undefined).map((r) => r.id),
      reporting: config.resources.flatMap((r) => (r.report === undefined ? [] : [{ resource: r.id, ...r.report }])),
      actuators,
      holdOnRefusedToken: true,
      // A full queue refuses the newest reading, which goes to the overflow: nothing the durable queue
      // holds is ever evicted.
      uplink: { queue: config.queue, overflow: 'drop-newest', flushMs: 1000, maxLatencyMs: 2000, batch: 500, startJitterMs: 1000, authRetryMs: AUTH_RETRY_MS },
    });
  }

  get name(): string {
    return this.config.name;
  }

  get phase(): DeviceStats['state'] {
    return this.state;
  }

  /** Starts the agent; never rejects: a device the service refuses is logged and marked failed. */
  async start(): Promise<void> {
    try {
      await this.agent.start();
      // Nothing of this run is queued yet (readings wait for 'running'): what is queued was restored.
      this.restored = this.agent.stats().queued;
      // What an earlier run left in the overflow goes behind what its durable queue restored.
      // They are fed even if the overflow was turned off since; it then takes no new ones.
      if (this.state === 'starting' && existsSync(this.overflowDir)) this.openOverflow();
      if (this.state === 'starting') this.state = 'running';
    } catch (e) {
      this.state = 'failed';
      this.log(`${this.name}: not started: ${(e as Error).message}`);
    }
  }

  /** Stops the agent, delivering what is queued within `timeoutMs`; what is left stays in its durable queue. */
  async stop(timeoutMs: number): Promise<void> {
    if (this.state === 'stopped' || this.state === 'stopping') return;
    this.state = 'stopping';
    if (this.feeder !== null) clearInterval(this.feeder);
    this.finalStats = await this.agent.stop({ flush: true, timeoutMs });
    // What the overflow still holds stays on disk for the next start.
    this.overflow?.close();
    this.state = 'stopped';
  }

  /** Whether it takes readings now: not while it starts, nor once it stops. */
  get running(): boolean {
    return this.state === 'running';
  }

  /**
   * A reading for one of its resources. While the overflow holds readings, it goes behind them, so order
   * is kept. 'full': neither the queue nor the overflow took it; nothing was kept.
   */
  offer(resource: number, value: SampleValue): Offer {
    if (this.state !== 'running') return 'not-running';
    if (this.overflow === null || this.overflow.size === 0) {
      // The common case costs one call: the stats are read only when the reading was not queued.
      if (this.agent.record(resource, value) === 'queued') return 'stored';
      const turnedAway = this.turnedAway();
      if (turnedAway !== 'full') return turnedAway;
    }
    return this.spill(resource, value) ? 'stored' : 'full';
  }

  /** A reading offered and found 'full' is gone: a Modbus poll, which keeps no backlog. */
  lose(): void {
    this.lost++;
  }

  /** A source of this device was heard: presence is kept alive again. */
  heard(): void {
    this.heardAt = performance.now();
    if (!this.present) {
      this.present = true;
      this.log(`${this.name}: heard from again, presence kept alive`);
    }
  }

  /** The field device's last will came: presence lapses at once. */
  gone(): void {
    this.heardAt = -Infinity;
    this.checkPresence();
  }

  stats(): DeviceStats {
    const s = this.finalStats ?? this.agent.stats();
    return {
      name: this.name,
      publicKey: this.config.publicKey,
      state: this.state,
      present: this.present,
      queued: s.queued,
      overflow: this.overflow?.size ?? 0,
      accepted: s.accepted,
      restored: this.restored,
      delivered: s.sent,
      setAside: s.setAside,
      lost: this.lost,
      refused: s.rejectedInvalid,
      oldestAgeMs: s.oldestAgeMs,
      authPaused: s.authPaused,
      storageErrors: s.storageErrors,
      commands: s.commands,
      commandErrors: s.commandErrors,
      unresolved: s.unresolved,
      lastError: s.lastError,
    };
  }

  /** Lets presence lapse once the sources have been silent past the limit (the gateway calls it every second). */
  checkPresence(): void {
    if (this.state !== 'running' || !this.present || performance.now() - this.heardAt < this.config.silenceMs) return;
    this.present = false;
    const why = this.heardAt === -Infinity ? 'its last will came' : `silent for ${Math.round(this.config.silenceMs / 1000)} s`;
    this.log(`${this.name}: ${why}: presence no longer kept alive (its queue still drains)`);
  }

  /** Why the agent did not queue a reading: its queue is full, or the reading is refused. */
  private turnedAway(): 'full' | { refused: string } {
    const s = this.agent.stats();
    if (s.droppedOverflow > this.dropped) {
      this.dropped = s.droppedOverflow;
      return 'full';
    }
    return { refused: s.lastError ?? 'refused' };
  }

  /** Appends the reading to the overflow (written to the OS before this returns); false if it has no room. */
  private spill(resource: number, value: SampleValue): boolean {
    if (this.config.overflowBytes === 0 || this.overflowFailed) return false;
    const overflow = this.overflow ?? this.openOverflow();
    if (overflow === null) return false;
    if (!overflow.push(resource, value)) {
      this.once.say('overflow-full', `${this.name}: its overflow takes no more readings: ${overflow.refusal}`);
      return false;
    }
    this.once.say('spilled', `${this.name}: queue full: readings go to its overflow on disk (up to ${mib(this.config.overflowBytes)}) and are fed back, oldest first, as the queue has room`);
    this.feedSoon();
    return true;
  }

  /** Opens the overflow, and feeds what it holds once the queue has room; null (logged) if it cannot be opened. */
  private openOverflow(): Overflow | null {
    try {
      // An overflow turned off (0) is opened only for what an earlier run left: any bound serves.
      const maxBytes = this.config.overflowBytes || 1024 * 1024;
      this.overflow = new Overflow(this.overflowDir, { fsync: this.queueSettings.fsync, fsyncIntervalMs: this.queueSettings.fsyncIntervalMs, maxBytes });
    } catch (e) {
      this.overflowFailed = true;
      this.log(`${this.name}: its overflow cannot be opened (${(e as Error).message}): a full queue holds readings back instead`);
      return null;
    }
    const held = this.overflow.size;
    if (held > 0) {
      this.log(`${this.name}: ${held} readings in its overflow on disk, fed into its queue after what the queue holds`);
      this.feedSoon();
    }
    return this.overflow;
  }

  private feedSoon(): void {
    this.feeder ??= setInterval(() => this.feed(), FEED_MS);
    this.feeder.unref();
  }

  /** Moves readings from the overflow into the queue, oldest first, while the queue has room. */
  private feed(): void {
    const overflow = this.overflow;
    if (this.state !== 'running' || overflow === null) return;
    try {
      for (let oldest = overflow.peek(); oldest !== null; oldest = overflow.peek()) {
        // Written to the queue first, then marked fed: a kill between the two stores it twice, never loses it.
        if (this.agent.record(oldest.resource, oldest.value) !== 'queued' && this.turnedAway() === 'full') return this.hurry();
        // Queued, or refused by the resource (counted and logged by the agent, in `refused`).
        overflow.shift();
      }
    } catch (e) {
      // Its files cannot be read (or acked): tried again at the next turn; what it holds stays on disk.
      this.once.say('feed-failed', `${this.name}: its overflow cannot be fed back, trying again: ${(e as Error).message}`);
      return;
    }
    if (this.feeder !== null) clearInterval(this.feeder);
    this.feeder = null;
  }

  /**
   * A full queue with more behind it in the overflow is sent now rather than at the flush timer: a queue
   * smaller than a batch would otherwise take one timer's wait per queueful. A refused token's wait is kept.
   */
  private hurry(): void {
    if (this.hurrying) return;
    this.hurrying = true;
    const done = (): void => {
      this.hurrying = false;
    };
    this.agent.flush().then(done, done);
  }

  private agentLog(level: LogLevel, message: string): void {
    if (level !== 'debug') this.log(`${this.name}: ${level}: ${message}`);
  }
}

/** The request with `silent=true`: it does not keep presence alive. */
function silenced(req: HttpRequest): HttpRequest {
  if (/[?&]silent=/.test(req.url)) return req;
  return { ...req, url: req.url + (req.url.includes('?') ? '&' : '?') + 'silent=true' };
}

function mib(bytes: number): string {
  return `${+(bytes / 1024 / 1024).toFixed(2)} MiB`;
}
