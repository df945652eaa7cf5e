// MQTT in (and commands out): one connection to the broker, QoS 1 on a persistent session (a fixed
// client id, no clean start). A message is acknowledged (PUBACK) only once its reading is in its device's
// durable queue: MQTT.js sends the PUBACK of a QoS 1 message when `handleMessage` calls back, and hands
// over the next message only then (node_modules/mqtt/build/lib/handlers/publish.js, client.js). A gateway
// killed at any instant therefore loses nothing the broker handed it: the broker hands over again (DUP)
// what was not acknowledged, and `Receipts` recognises what was stored already. A message whose device
// cannot take it yet (its backlog at its bound, or the device starting) waits for that device's event,
// and, as MQTT acknowledges in order, every message behind it on this connection waits with it.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IClientOptions, MqttClient } from 'mqtt';
import type { IPublishPacket, Packet } from 'mqtt-packet';

import type { Ladder } from '../../../src/core/requests/backoff';
import type { SampleValue } from '../../../src/core/host/host';
import type { RetryLadder } from '../../../src/core/requests/retry-ladder';
import { rawData } from '../../../src/core/wire/validate';
import type { MqttBrokerConfig } from './config';
import type { GatewayDevice } from './device';
import { gatewayLadder } from './ladder';
import { Once } from './once';
import { readPayload } from './payload';
import type { MqttLib } from './peers';
import { Receipts } from './receipts';
import type { BrokerStats, SourceStats } from './stats';
import { TopicRouter } from './topics';

export interface MqttRoute {
  filter: string;
  field?: string;
  resource: number;
  /** The device now serving this route (undefined while a reload replaces it). */
  device: () => GatewayDevice | undefined;
  stats: SourceStats;
}

export interface WillRoute {
  filter: string;
  /** Only this payload marks the device gone; absent: any message on the topic. */
  payload?: string;
  device: () => GatewayDevice | undefined;
}

/** Reconnects: the first within a second, then up to every 30 s. */
const RECONNECT: Ladder = Object.freeze({ baseMs: 1000, capMs: 30_000 });

export class MqttIn {
  private readonly client: MqttClient;
  private readonly receipts: Receipts;
  private readonly once: Once;
  private router = new TopicRouter<MqttRoute>([]);
  private wills = new TopicRouter<WillRoute>([]);
  private filters: string[] = [];
  private readonly counts: BrokerStats;
  /** The reconnects since the last connect: their waits, and the broker's state in the log. */
  private readonly ladder: RetryLadder;
  /** What broke the connection being closed (its error), for the log. */
  private why: string | null = null;
  private stopping = false;
  /** Counts the connection's closes: a message of a closed connection is handed over again, never acknowledged. */
  private connection = 0;
  /** Messages waiting for a device that a reload is replacing: woken by the next `route`. */
  private rerouted: (() => void)[] = [];

  constructor(
    lib: MqttLib,
    private readonly config: MqttBrokerConfig,
    queueDir: string,
    private readonly log: (line: string) => void,
  ) {
    this.once = new Once(log);
    this.ladder = gatewayLadder(RECONNECT, 'mqtt: ' + config.url, log);
    this.counts = { url: config.url, connected: false, connects: 0, messagesIn: 0, unmatched: 0, duplicatesSkipped: 0, heldForRoom: 0, lastError: null };
    mkdirSync(queueDir, { recursive: true });
    this.receipts = new Receipts(join(queueDir, 'mqtt-' + config.clientId.replace(/[^A-Za-z0-9._-]/g, '_') + '.receipts'));
    const options: IClientOptions = {
      clientId: config.clientId,
      clean: false,
      protocolVersion: 4,
      keepalive: config.keepaliveS,
      reconnectPeriod: RECONNECT.baseMs,
      reconnectOnConnackError: true,
      connectTimeout: 10_000,
      ...(config.username === undefined ? {} : { username: config.username }),
      ...(config.password === undefined ? {} : { password: config.password }),
      ...(config.caFile === undefined ? {} : { ca: readFileSync(config.caFile) }),
    };
    this.client = lib.connect(config.url, options);
    // Before any packet can arrive: the PUBACK waits for this callback.
    this.client.handleMessage = (packet: Packet, done: (error?: Error) => void) => {
      let result: void | Promise<void>;
      try {
        result = this.handle(packet as IPublishPacket);
      } catch (e) {
        this.failed(e);
        return;
      }
      if (result === undefined) done();
      else result.then(() => done(), (e: unknown) => this.failed(e));
    };
    this.client.on('connect', (connack) => {
      this.counts.connected = true;
      this.counts.connects++;
      this.ladder.succeed(performance.now());
      this.log(`mqtt: connected to ${config.url} as ${config.clientId} (${connack.sessionPresent ? 'session kept by the broker' : 'new session'})`);
      this.subscribe(this.filters);
    });
    // Every close is a failed try, whatever closed it (a refused connect, a refused login, a lost
    // connection): the next connect waits the ladder's backoff. mqtt.js emits a connection's error first.
    this.client.on('close', () => {
      this.connection++;
      const why = this.why ?? (this.counts.connected ? 'the connection closed' : 'closed before the broker accepted the session');
      this.why = null;
      this.counts.connected = false;
      if (!this.stopping) this.backOff(why + ' (reconnecting with backoff; the devices go on delivering)');
    });
    this.client.on('error', (e) => {
      this.counts.lastError = e.message;
      this.why = e.message;
    });
  }

  /** Whether `config` is the broker and session this connection serves. */
  sameBroker(config: MqttBrokerConfig): boolean {
    const { subscribe: _a, ...a } = config;
    const { subscribe: _b, ...b } = this.config;
    return JSON.stringify(a) === JSON.stringify(b);
  }

  /** Takes new routes (after a start or a reload): subscribes to new filters, unsubscribes from dropped ones. */
  route(routes: MqttRoute[], wills: WillRoute[]): void {
    this.router = new TopicRouter(routes.map((r) => [r.filter, r]));
    this.wills = new TopicRouter(wills.map((w) => [w.filter, w]));
    const next = [...new Set([...routes.map((r) => r.filter), ...wills.map((w) => w.filter), ...this.config.subscribe])];
    const dropped = this.filters.filter((f) => !next.includes(f));
    const added = next.filter((f) => !this.filters.includes(f));
    this.filters = next;
    if (this.client.connected) {
      this.subscribe(added);
      if (dropped.length > 0) this.client.unsubscribe(dropped);
    }
    const waiting = this.rerouted;
    this.rerouted = [];
    for (const wake of waiting) wake();
  }

  /** Publishes a command at QoS 1; resolves on the broker's PUBACK. */
  publish(topic: string, value: SampleValue, retain: boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      this.client.publish(topic, rawData(value), { qos: 1, retain }, (e) => (e ? reject(e) : resolve()));
    });
  }

  stats(): BrokerStats {
    return { ...this.counts };
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.client.endAsync(true);
    this.receipts.close();
  }

  /** One message: sync when every reading was taken at once, else a promise that waits until they are. */
  private handle(packet: IPublishPacket): void | Promise<void> {
    if (this.stopping) return new Promise(() => {}); // never acknowledged: the broker keeps it for the next run
    const topic = packet.topic;
    const payload = packet.payload as Buffer;
    const id = packet.messageId;
    this.counts.messagesIn++;
    if (packet.qos > 0 && packet.dup && id !== undefined && this.receipts.has(id, topic, payload)) {
      this.counts.duplicatesSkipped++;
      return;
    }
    for (const will of this.wills.match(topic)) {
      if (will.payload === undefined || will.payload === payload.toString('utf8')) will.device()?.gone();
    }
    const routes = this.router.match(topic);
    if (routes.length === 0) {
      if (this.wills.match(topic).length === 0) {
        this.counts.unmatched++;
        this.once.say('unmatched:' + topic, `mqtt: topic ${JSON.stringify(topic)} matches no resource (counted, acknowledged)`);
      }
      return this.noted(packet);
    }
    const held = new Set<SourceStats>();
    const done = new Set<SourceStats>();
    const waits = this.offerAll(topic, payload, routes, done, held);
    if (waits === null) return this.noted(packet);
    return this.waitAndOffer(topic, payload, waits, done, held).then(() => this.noted(packet));
  }

  /**
   * Offers the message's reading to each route not done yet (`done` gains those that took it); returns
   * what the others wait for, or null when none must. `held`: routes already counted as held for room.
   */
  private offerAll(topic: string, payload: Buffer, routes: readonly MqttRoute[], done: Set<SourceStats>, held: Set<SourceStats>): Promise<void>[] | null {
    let waits: Promise<void>[] | null = null;
    for (const route of routes) {
      if (done.has(route.stats)) continue;
      const device = route.device();
      if (device === undefined || device.phase === 'stopping') {
        // A reload replaces its device: the next routes have the new one.
        (waits ??= []).push(new Promise((resolve) => this.rerouted.push(resolve)));
        continue;
      }
      if (device.phase === 'starting') {
        (waits ??= []).push(device.whenStarted());
        continue;
      }
      const s = route.stats;
      // Any message from the field device, even one that gives no reading, shows that it is there.
      device.heard();
      const reading = readPayload(payload, route.field);
      if ('problem' in reading) {
        s.messagesIn++;
        s.lastSeen = Date.now();
        s.parseErrors++;
        // Once per topic and kind of problem: the text before the payload's preview.
        this.once.say(`parse:${route.filter}:${topic}:${reading.problem.split(':')[0]}`, `${device.name}: resource ${route.resource}: topic ${JSON.stringify(topic)}: ${reading.problem} (counted; logged once per topic)`);
        done.add(s);
        continue;
      }
      const offer = device.offer(route.resource, reading.value);
      if (offer === 'full') {
        if (!held.has(s)) this.counts.heldForRoom++;
        held.add(s);
        this.once.say(
          `full:${device.name}`,
          `${device.name}: its backlog is at its bound (${device.bound}): acknowledgements to the broker wait until readings leave ` +
            '(the broker keeps the messages; as MQTT acknowledges in order, every device on this broker connection waits)',
        );
        (waits ??= []).push(device.whenRoom());
        continue;
      }
      s.messagesIn++;
      s.lastSeen = Date.now();
      done.add(s);
      if (offer === 'not-running') {
        s.refused++;
        this.once.say(`down:${device.name}`, `${device.name}: not running (see above): its readings are counted as refused`);
      } else if (offer !== 'stored') {
        s.refused++;
        this.once.say(`refused:${route.filter}:${topic}`, `${device.name}: topic ${JSON.stringify(topic)}: ${offer.refused} (counted; logged once per topic)`);
      }
    }
    return waits;
  }

  /**
   * Waits for the first of `waits` (room in a device, a device started, new routes), offers again to the
   * routes not done, and so on until every route took the message. A message of a connection that closed
   * meanwhile, or of a gateway that stops, is never acknowledged: the broker hands it over again.
   */
  private async waitAndOffer(topic: string, payload: Buffer, first: Promise<void>[], done: Set<SourceStats>, held: Set<SourceStats>): Promise<void> {
    const connection = this.connection;
    for (let waits: Promise<void>[] | null = first; waits !== null; ) {
      await Promise.race(waits);
      if (this.stopping || connection !== this.connection) return new Promise(() => {});
      waits = this.offerAll(topic, payload, this.router.match(topic), done, held);
    }
  }

  /** Notes a handled QoS 1 message (after its readings were queued), just before its PUBACK. */
  private noted(packet: IPublishPacket): void {
    if (packet.qos > 0 && packet.messageId !== undefined) this.receipts.note(packet.messageId, packet.topic, packet.payload as Buffer);
  }

  /** Something broke while handling a message: no PUBACK; drop the connection so the broker hands it over again. */
  private failed(e: unknown): void {
    this.counts.lastError = (e as Error).message;
    this.log(`mqtt: error while handling a message, reconnecting so that the broker hands it over again: ${(e as Error).stack ?? String(e)}`);
    this.client.stream?.destroy();
  }

  private subscribe(filters: string[]): void {
    if (filters.length === 0) return;
    this.client.subscribe(filters, { qos: 1 }, (e) => {
      // From here on the broker keeps these topics' messages for the session, while the gateway is away too.
      if (e) this.log(`mqtt: subscribing to ${filters.join(', ')} failed: ${e.message}`);
      else this.log(`mqtt: subscribed to ${filters.length} topic filter${filters.length === 1 ? '' : 's'}`);
    });
  }

  /** Reconnects after the ladder's backoff (src/core/requests/backoff.ts): a broker that comes back is not stormed. */
  private backOff(why: string): void {
    // mqtt.js takes a period of 0 as "never reconnect".
    const wait = Math.max(100, this.ladder.fail(performance.now(), why));
    const c = this.client as unknown as { options: IClientOptions; reconnectTimer: unknown; _clearReconnect(): void; _setupReconnect(): void };
    c.options.reconnectPeriod = wait;
    if (c.reconnectTimer) {
      c._clearReconnect();
      c._setupReconnect();
    }
  }
}
