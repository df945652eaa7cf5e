// One service device behind the gateway: its agent, its durable queue (the backlog on disk, behind a small
// queue in memory), and its presence, which follows the field device. Readings come in through `offer`
// (from MQTT or Modbus); commands go out through the agent's actuators to what the gateway wires in
// (`CommandWriter`).
import { join } from 'node:path';

import { createAgent } from '../../../src/core/agent';
import type { Agent, AgentStats } from '../../../src/core/agent';
import type { ActuatorConfig } from '../../../src/core/config';
import type { HttpRequest, LogLevel, SampleValue } from '../../../src/core/host/host';
import { createNodeHost } from '../host/host';
import { openDurableQueue } from '../storage/durable-queue';
import type { DeviceConfig, GatewayConfig } from './config';
import type { Paced, RequestFn } from './pacing';
import type { WindowMemory } from './window-memory';

/**
 * What became of a reading offered to a device: 'stored' in its durable queue (written to the OS before
 * `offer` returns), or held back by its report rule; 'full': its backlog is at its bound, nothing was kept
 * (`whenRoom` says when to offer it again).
 */
export type Offer = 'stored' | 'full' | 'not-running' | { refused: string };

export interface DeviceStats {
  name: string;
  publicKey: string;
  /** starting, running, stopped, or failed (the service refused its config: resources it does not have). */
  state: 'starting' | 'running' | 'stopping' | 'stopped' | 'failed';
  /** Presence is kept alive: a source was heard within `silenceS`, and no last will came since. */
  present: boolean;
  /** Readings waiting to be delivered: in its queue in memory and in its backlog on disk. */
  queued: number;
  /** Of those, the readings on disk only, beyond the queue in memory (docs/gateway.md, "The backlog"). */
  backlog: number;
  /** Readings queued (and written to the durable queue) in this run. */
  accepted: number;
  /** Readings its report rules held back rather than queued (a later report stood for them). */
  heldBack: number;
  /**
   * Readings the durable queue gave back at start (not acknowledged by the service before the last
   * stop or kill): sent again, so those of a batch the service stored just before a kill are stored
   * twice (README, Guarantees, "Duplicates").
   */
  restored: number;
  delivered: number;
  setAside: number;
  /**
   * Readings that could not be kept and are gone: a Modbus reading polled while its backlog was at its
   * bound, or read as its device stopped (each reason logged).
   */
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
  /** Requests made toward the service, of every kind (batches, read-backs, command polls, presence reads, lookups). */
  requests: number;
  lastError: string | null;
}

/** Sends an actuator's new value to the field; resolves once the field has it (a PUBACK, a write answered). */
export type CommandWriter = (value: SampleValue) => Promise<void>;

/** While the service refuses a device's token, it is tried again this often (a fixed token counts soon). */
const AUTH_RETRY_MS = 60_000;
/** The most readings a request carries (the queue in memory may hold fewer). */
const BATCH = 500;
/**
 * The durable queue's segment files: 1 MiB (its default), or a quarter of a smaller bound, so that room
 * comes back, a segment at a time, as readings leave.
 */
const SEGMENT_BYTES = 1024 * 1024;

export class GatewayDevice {
  private readonly agent: Agent;
  private state: DeviceStats['state'] = 'starting';
  private heardAt = performance.now();
  /** Readings that could not be kept, which will not come again. */
  private lost = 0;
  /** Resolved once `start` is over, whatever its outcome (a reading that came while it started waits for it). */
  private readonly started: Promise<void>;
  private startOver!: () => void;
  private present = true;
  private restored = 0;
  private finalStats: AgentStats | null = null;
  /** Its queue's memory, lent by the gateway, given back once the agent stopped. */
  private window: Uint8Array | null = null;
  private readonly windows: WindowMemory | undefined;

  constructor(
    readonly config: DeviceConfig,
    gateway: Pick<GatewayConfig, 'queue' | 'service'>,
    /**
     * What the gateway's devices share: its one HTTP pool, its pace (every request of the device waits for
     * a turn), and the memory their queues live in. Without `windows` the queue is a buffer of its own, of
     * its whole capacity: the design before the backlog, which the bench measures beside this one.
     */
    shared: { request: RequestFn; turn: Paced['turn']; windows?: WindowMemory },
    private readonly log: (line: string) => void,
    writerFor: (resource: number) => CommandWriter,
  ) {
    this.started = new Promise((resolve) => (this.startOver = resolve));
    const windows = (this.windows = shared.windows);
    const storage = openDurableQueue(join(gateway.queue.dir, config.publicKey), {
      fsync: gateway.queue.fsync,
      fsyncIntervalMs: gateway.queue.fsyncIntervalMs,
      maxBytes: config.overflowBytes,
      segmentBytes: Math.min(SEGMENT_BYTES, Math.max(1, Math.floor(config.overflowBytes / 4))),
    });
    const host = createNodeHost({
      storage,
      log: (level, message) => this.agentLog(level, message),
      // While the field device is silent, every request says `silent=true`: its queue still drains, and
      // the platform lets its presence lapse.
      request: (req) => shared.request(this.present ? req : silenced(req)),
      turn: shared.turn,
      // The ring the queue is in now, given back once the agent stopped; those it outgrew or shrank from
      // go back at once.
      memory: windows && { take: (bytes) => (this.window = windows.take(bytes)), give: (region) => windows.give(region) },
    });
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
      // The queue in memory is a window onto the backlog in the durable queue. At the backlog's bound the
      // newest reading is refused and waits (MQTT) or is lost (Modbus): nothing stored is ever evicted.
      uplink: {
        queue: config.queue,
        overflow: 'drop-newest',
        flushMs: 1000,
        maxLatencyMs: 2000,
        // A batch no larger than the window, so that a full window with a backlog behind it goes at once.
        batch: Math.min(BATCH, config.queue),
        startJitterMs: 1000,
        authRetryMs: AUTH_RETRY_MS,
      },
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
      if (this.state === 'starting') this.state = 'running';
    } catch (e) {
      this.state = 'failed';
      this.log(`${this.name}: not started: ${(e as Error).message}`);
    }
    this.startOver();
  }

  /** Resolves once it no longer starts: running, failed, or stopped. */
  whenStarted(): Promise<void> {
    return this.started;
  }

  /** Stops the agent, delivering what is queued within `timeoutMs`; what is left stays in its durable queue. */
  async stop(timeoutMs: number): Promise<void> {
    if (this.state === 'stopped' || this.state === 'stopping') return;
    this.state = 'stopping';
    this.finalStats = await this.agent.stop({ flush: true, timeoutMs });
    // The stopped agent takes no reading and runs no timer: its queue's memory can serve another device.
    if (this.window !== null) this.windows?.give(this.window);
    this.window = null;
    this.state = 'stopped';
    this.startOver();
  }

  /** Whether it takes readings now: not while it starts, nor once it stops. */
  get running(): boolean {
    return this.state === 'running';
  }

  /**
   * A reading for one of its resources: in the queue in memory, or behind it in the backlog on disk, in
   * order either way. 'full': the backlog is at its bound; nothing was kept.
   */
  offer(resource: number, value: SampleValue): Offer {
    if (this.state !== 'running') return 'not-running';
    const result = this.agent.record(resource, value);
    if (result === 'queued') return 'stored';
    return result === 'full' ? 'full' : { refused: this.agent.lastRefusal ?? 'refused' };
  }

  /**
   * Resolves when a reading `offer` found 'full' may be offered again: readings left (there may be room),
   * or the device stopped. Offer it again, and wait again if it is still 'full'.
   */
  whenRoom(): Promise<void> {
    return this.agent.whenRoom();
  }

  /** A reading that could not be kept is gone: a Modbus poll, which keeps no backlog of its own. */
  lose(): void {
    this.lost++;
  }

  /** The bound of its backlog, for log lines. */
  get bound(): string {
    return `${+(this.config.overflowBytes / 1024 / 1024).toFixed(3)} MiB`;
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
      backlog: s.backlog,
      accepted: s.accepted,
      heldBack: s.heldBack,
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
      requests: s.requests,
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

  private agentLog(level: LogLevel, message: string): void {
    if (level !== 'debug') this.log(`${this.name}: ${level}: ${message}`);
  }
}

/** The request with `silent=true`: it does not keep presence alive. */
function silenced(req: HttpRequest): HttpRequest {
  if (/[?&]silent=/.test(req.url)) return req;
  return { ...req, url: req.url + (req.url.includes('?') ? '&' : '?') + 'silent=true' };
}
