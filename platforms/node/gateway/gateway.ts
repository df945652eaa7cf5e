// The gateway: one process serving many service devices whose readings come from field devices on MQTT
// and Modbus TCP. One agent and one durable queue per device; one HTTP pool and one rate limit toward the
// service for all of them. docs/gateway.md tells the config, the guarantees and the limits.
import { createHttp } from '../host/http';
import type { SampleValue } from '../../../src/core/host/host';
import type { DeviceConfig, GatewayConfig } from './config';
import { GatewayDevice } from './device';
import type { CommandWriter } from './device';
import { renderMetrics } from './metrics';
import { serveMetrics } from './metrics-server';
import type { MetricsServer } from './metrics-server';
import { ModbusIn } from './modbus-in';
import type { ModbusPoll } from './modbus-in';
import { MqttIn } from './mqtt-in';
import type { MqttRoute, WillRoute } from './mqtt-in';
import { paceRequests } from './pacing';
import type { Paced, RequestFn } from './pacing';
import { WindowMemory } from './window-memory';
import { loadPeers } from './peers';
import type { Peers } from './peers';
import { newSourceStats } from './stats';
import type { GatewayStats, SourceStats } from './stats';
import { statusLine, totals } from './status';

export interface GatewayOptions {
  /** Where log lines go (default: standard output). Every line about a device starts with its name. */
  log?: (line: string) => void;
  /** How long stop() and a reload that removes a device wait for its queue to drain (default 10 s). */
  drainMs?: number;
}

export interface Gateway {
  /** Stops reading the field, drains every queue within `drainMs`, closes the queues and connections. */
  stop(): Promise<void>;
  /** Applies a new config: removed devices drain and close, added ones start, the rest keep running. */
  reload(config: GatewayConfig): Promise<void>;
  /** The Prometheus text exposition of `stats()`. */
  metrics(): string;
  stats(): GatewayStats;
  /** `http://host:port/metrics` while the endpoint is on, else null. */
  readonly metricsUrl: string | null;
}

const DEFAULT_DRAIN_MS = 10_000;
/** How often presence is checked against each device's silence limit. */
const PRESENCE_CHECK_MS = 1000;

/** Starts every device, the MQTT and Modbus inputs, the metrics endpoint and the status line. */
export async function startGateway(config: GatewayConfig, options: GatewayOptions = {}): Promise<Gateway> {
  const peers = await loadPeers(config);
  const gateway = new RunningGateway(config, peers, options);
  try {
    await gateway.begin();
  } catch (e) {
    await gateway.stop();
    throw e;
  }
  return gateway;
}

class RunningGateway implements Gateway {
  private readonly log: (line: string) => void;
  private readonly drainMs: number;
  private readonly paced: Paced;
  /** The memory every device's queue lives in. */
  private readonly windows = new WindowMemory();
  private readonly http: RequestFn;
  private readonly devices = new Map<string, GatewayDevice>();
  private sources: SourceStats[] = [];
  private mqtt: MqttIn | null = null;
  private modbus: ModbusIn | null = null;
  private server: MetricsServer | null = null;
  private statusTimer: ReturnType<typeof setInterval> | null = null;
  /** One timer for every device's silence limit. */
  private readonly presenceTimer: ReturnType<typeof setInterval>;
  private stopped = false;

  constructor(
    private config: GatewayConfig,
    private peers: Peers,
    options: GatewayOptions,
  ) {
    this.log = options.log ?? ((line) => console.log(line));
    this.drainMs = options.drainMs ?? DEFAULT_DRAIN_MS;
    this.http = createHttp({ connections: config.service.connections, ...(config.service.caFile === undefined ? {} : { caFile: config.service.caFile }) });
    this.paced = paceRequests(config.service.requestsPerSecond);
    this.presenceTimer = setInterval(() => {
      for (const d of this.devices.values()) d.checkPresence();
    }, PRESENCE_CHECK_MS).unref();
  }

  get metricsUrl(): string | null {
    return this.server?.url ?? null;
  }

  async begin(): Promise<void> {
    // The endpoint first: a port in use stops the start before any device or connection.
    if (this.config.metrics !== null) this.server = await serveMetrics(this.config.metrics, () => this.metrics());
    for (const d of this.config.devices) this.devices.set(d.publicKey, this.newDevice(d));
    this.wire();
    await Promise.all([...this.devices.values()].map((d) => d.start()));
    this.armStatus();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.statusTimer !== null) clearInterval(this.statusTimer);
    clearInterval(this.presenceTimer);
    await this.mqtt?.stop();
    await this.modbus?.stop();
    await Promise.all([...this.devices.values()].map((d) => d.stop(this.drainMs)));
    this.paced.close();
    await this.server?.close();
  }

  async reload(next: GatewayConfig): Promise<void> {
    if (this.stopped) throw new Error('the gateway is stopped');
    const peers = await loadPeers(next);
    const removed: GatewayDevice[] = [];
    const changed: GatewayDevice[] = [];
    for (const [key, device] of this.devices) {
      const wanted = next.devices.find((d) => d.publicKey === key);
      if (wanted === undefined) removed.push(device);
      else if (JSON.stringify(wanted) !== JSON.stringify(device.config)) changed.push(device);
    }
    for (const d of [...removed, ...changed]) this.devices.delete(d.config.publicKey);
    this.config = next;
    this.peers = peers;
    // Routes first: a removed device takes no more readings, a changed one waits for its new agent.
    this.wire();
    // A changed device stops without draining: its new agent opens the same durable queue and sends
    // what is left. A removed one drains (within drainMs) and closes its queue.
    await Promise.all(changed.map((d) => d.stop(0)));
    const added = next.devices.filter((d) => !this.devices.has(d.publicKey));
    for (const d of added) this.devices.set(d.publicKey, this.newDevice(d));
    this.wire();
    this.log(`gateway: reloaded: ${added.length - changed.length} added, ${changed.length} changed, ${removed.length} removed`);
    await Promise.all([
      ...added.map((d) => (this.devices.get(d.publicKey) as GatewayDevice).start()),
      ...removed.map(async (d) => {
        await d.stop(this.drainMs);
        this.log(`${d.name}: removed from the config: queue drained (${d.stats().queued} left on disk) and closed`);
      }),
    ]);
    if (this.statusTimer !== null) clearInterval(this.statusTimer);
    this.armStatus();
  }

  stats(): GatewayStats {
    return {
      // In the config's order, whatever reloads did to the map's.
      devices: this.config.devices.flatMap((c) => this.devices.get(c.publicKey)?.stats() ?? []),
      sources: this.sources,
      mqtt: this.mqtt?.stats() ?? null,
      modbus: this.modbus?.stats() ?? [],
      requestsWaiting: this.paced.waiting(),
    };
  }

  metrics(): string {
    return renderMetrics(this.stats());
  }

  private newDevice(d: DeviceConfig): GatewayDevice {
    return new GatewayDevice(d, this.config, { request: this.http, turn: this.paced.turn, windows: this.windows }, this.log, (resource) => this.commandWriter(d, resource));
  }

  /** Where an actuator's new values go: an MQTT publish at QoS 1, or a Modbus write. */
  private commandWriter(d: DeviceConfig, resource: number): CommandWriter {
    const out = d.resources.find((r) => r.id === resource)?.command;
    if (out !== undefined && 'mqtt' in out) return (value: SampleValue) => (this.mqtt as MqttIn).publish(out.mqtt.topic, value, out.mqtt.retain);
    if (out !== undefined && 'modbus' in out) return (value: SampleValue) => (this.modbus as ModbusIn).write(out.modbus, value);
    throw new Error(`resource ${resource} has no command output`);
  }

  /** (Re)builds the routes from the config to the running devices, keeping each source's counts. */
  private wire(): void {
    const old = new Map(this.sources.map((s) => [s.device + '\u0000' + s.resource + '\u0000' + s.source, s]));
    const stat = (source: string, device: DeviceConfig, resource: number): SourceStats =>
      old.get(device.name + '\u0000' + resource + '\u0000' + source) ?? newSourceStats(source, device.name, resource);
    const routes: MqttRoute[] = [];
    const wills: WillRoute[] = [];
    const polls: ModbusPoll[] = [];
    const sources: SourceStats[] = [];
    const deviceOf = (key: string) => () => this.devices.get(key);
    for (const d of this.config.devices) {
      if (d.lastWill !== undefined) wills.push({ filter: d.lastWill.topic, payload: d.lastWill.payload, device: deviceOf(d.publicKey) });
      for (const r of d.resources) {
        if (r.mqtt !== undefined) {
          const stats = stat('mqtt:' + r.mqtt.topic, d, r.id);
          sources.push(stats);
          routes.push({ filter: r.mqtt.topic, field: r.mqtt.field, resource: r.id, device: deviceOf(d.publicKey), stats });
        }
        if (r.modbus !== undefined) {
          const stats = stat(`modbus:${r.modbus.source}/${r.modbus.kind}/${r.modbus.address}`, d, r.id);
          sources.push(stats);
          polls.push({ input: r.modbus, resource: r.id, device: deviceOf(d.publicKey), stats });
        }
      }
    }
    this.sources = sources;
    const broker = this.config.mqtt;
    if (broker !== undefined && this.peers.mqtt !== undefined) {
      if (this.mqtt !== null && !this.mqtt.sameBroker(broker)) {
        void this.mqtt.stop();
        this.mqtt = null;
      }
      this.mqtt ??= new MqttIn(this.peers.mqtt, broker, this.config.queue.dir, this.log);
      this.mqtt.route(routes, wills);
    } else if (this.mqtt !== null) {
      void this.mqtt.stop();
      this.mqtt = null;
    }
    if (this.config.modbus.length > 0 && this.peers.modbus !== undefined) {
      if (this.modbus !== null && !this.modbus.samePeers(this.config.modbus)) {
        void this.modbus.stop();
        this.modbus = null;
      }
      this.modbus ??= new ModbusIn(this.peers.modbus, this.config.modbus, this.log);
      this.modbus.schedule(polls);
    } else if (this.modbus !== null) {
      void this.modbus.stop();
      this.modbus = null;
    }
  }

  private armStatus(): void {
    if (this.config.statusEveryMs <= 0) return;
    let last = totals(this.stats());
    let lastAt = performance.now();
    this.statusTimer = setInterval(() => {
      const now = this.stats();
      const at = performance.now();
      this.log(statusLine(now, last, (at - lastAt) / 1000));
      last = totals(now);
      lastAt = at;
    }, this.config.statusEveryMs);
    this.statusTimer.unref();
  }
}
