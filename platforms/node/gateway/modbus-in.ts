// Modbus TCP in (and commands out): each configured register is polled on its own schedule and its
// reading offered to its device. One connection per Modbus device ("source"), its requests one at a
// time. A device that does not answer is reconnected with backoff; a register whose read fails is tried
// again after a backoff of its own, while the other registers keep their schedule. Each is a retry ladder
// (ladder.ts): a device, and a register, is logged when it starts failing and when it recovers.
import type ModbusRTU from 'modbus-serial';

import type { Ladder } from '../../../src/core/requests/backoff';
import type { SampleValue } from '../../../src/core/host/host';
import type { RetryLadder } from '../../../src/core/requests/retry-ladder';
import type { CommandTarget, ModbusInput, ModbusSourceConfig } from './config';
import type { GatewayDevice } from './device';
import { gatewayLadder } from './ladder';
import { Once } from './once';
import type { ModbusLib } from './peers';
import { decodeWords, encodeWords, scaled, wordsOf } from './registers';
import type { ModbusPeerStats, SourceStats } from './stats';

export interface ModbusPoll {
  input: ModbusInput;
  resource: number;
  device: () => GatewayDevice | undefined;
  stats: SourceStats;
}

type ModbusOut = Extract<CommandTarget, { modbus: unknown }>['modbus'];

/** A device's connects, and a register's reads after one failed (never sooner than its period): from 0.5 s up to 30 s. */
const RETRY: Ladder = Object.freeze({ baseMs: 500, capMs: 30_000 });

export class ModbusIn {
  private readonly peers = new Map<string, Peer>();
  private timers: ReturnType<typeof setTimeout>[] = [];
  private generation = 0;
  private stopped = false;
  private readonly once: Once;

  constructor(
    lib: ModbusLib,
    private readonly configs: ModbusSourceConfig[],
    private readonly log: (line: string) => void,
  ) {
    this.once = new Once(log);
    for (const c of configs) this.peers.set(c.name, new Peer(lib, c, log));
  }

  samePeers(configs: ModbusSourceConfig[]): boolean {
    return JSON.stringify(configs) === JSON.stringify(this.configs);
  }

  /** Replaces the polling schedule (after a start or a reload). */
  schedule(polls: ModbusPoll[]): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
    const generation = ++this.generation;
    polls.forEach((poll, i) => {
      const { input } = poll;
      const reads = gatewayLadder(RETRY, `${poll.stats.device}: resource ${poll.resource}: reads of modbus ${input.source} ${input.kind} ${input.address}`, this.log);
      const tick = async (): Promise<void> => {
        if (this.stopped || generation !== this.generation) return;
        const wait = await this.poll(poll, reads);
        if (!this.stopped && generation === this.generation) this.timers[i] = setTimeout(tick, wait);
      };
      // Spread the first reads over the period, so that registers of one device do not all ask at once.
      this.timers[i] = setTimeout(tick, Math.random() * Math.min(poll.input.everyMs, 1000));
    });
  }

  /** Writes an actuator's new value; resolves once the device answered the write. */
  async write(out: ModbusOut, value: SampleValue): Promise<void> {
    const peer = this.peers.get(out.source) as Peer;
    const number = typeof value === 'boolean' ? (value ? 1 : 0) : Number(value);
    if (out.kind === 'coil') {
      await peer.run((c) => c.writeCoil(out.address, number !== 0));
    } else {
      const words = encodeWords((number - out.offset) / out.scale, out.type, out.wordOrder);
      await peer.run((c) => c.writeRegisters(out.address, words));
    }
  }

  stats(): ModbusPeerStats[] {
    return [...this.peers.values()].map((p) => p.stats());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    await Promise.all([...this.peers.values()].map((p) => p.close()));
  }

  /**
   * One read of one register; the wait before the next. None is made while its device cannot take a
   * reading (it is starting, or restarting in a reload): Modbus keeps no backlog, so a poll nobody could
   * keep is not made. A read that fails waits the register's backoff, never less than its period; one that
   * found its Modbus device unreachable keeps the period, as that device's connects have a ladder of their own.
   */
  private async poll(poll: ModbusPoll, reads: RetryLadder): Promise<number> {
    const { input, stats } = poll;
    if (poll.device()?.running === false) return input.everyMs;
    const peer = this.peers.get(input.source) as Peer;
    const where = `${input.source} ${input.kind} ${input.address}`;
    let value: number | boolean;
    try {
      value = await peer.run((c) => read(c, input));
    } catch (e) {
      stats.readErrors++;
      if (e instanceof Unreachable) return input.everyMs;
      return Math.max(input.everyMs, reads.fail(performance.now(), (e as Error).message));
    }
    reads.succeed(performance.now());
    stats.messagesIn++;
    stats.lastSeen = Date.now();
    const device = poll.device();
    if (device === undefined) return input.everyMs;
    device.heard();
    const offer = device.offer(poll.resource, value);
    if (offer === 'full') {
      // Modbus keeps no backlog of its own: a reading its device cannot keep now is gone.
      device.lose();
      this.once.say(`full:${device.name}`, `${device.name}: its backlog is at its bound (${device.bound}): Modbus readings polled until readings leave are lost (counted in lost)`);
    } else if (offer === 'not-running') {
      device.lose();
      this.once.say(`stopped:${device.name}`, `${device.name}: a Modbus reading came as the device stopped: lost (counted in lost)`);
    } else if (typeof offer === 'object') {
      stats.refused++;
      this.once.say(`refused:${where}`, `${device.name}: modbus ${where}: ${offer.refused} (counted; logged once per register)`);
    }
    return input.everyMs;
  }
}

async function read(c: ModbusRTU, input: ModbusInput): Promise<number | boolean> {
  switch (input.kind) {
    case 'coil':
      return (await c.readCoils(input.address, 1)).data[0];
    case 'discrete-input':
      return (await c.readDiscreteInputs(input.address, 1)).data[0];
    case 'input-register':
      return scaled(decodeWords((await c.readInputRegisters(input.address, wordsOf(input.type))).data, input.type, input.wordOrder), input.scale, input.offset);
    case 'holding-register':
      return scaled(decodeWords((await c.readHoldingRegisters(input.address, wordsOf(input.type))).data, input.type, input.wordOrder), input.scale, input.offset);
  }
}

/** A request that found no connection to its Modbus device: not the register's failure but the device's. */
class Unreachable extends Error {}

/** One Modbus TCP device: its connection, reconnected with backoff, and its requests, one at a time. */
class Peer {
  private client: ModbusRTU | null = null;
  private connecting: Promise<ModbusRTU> | null = null;
  private nextTryAt = 0;
  /** The connects since the last one that worked (a lost connection counts as a failed one): their waits, and the device's state in the log. */
  private readonly ladder: RetryLadder;
  private chain: Promise<unknown> = Promise.resolve();
  private readErrors = 0;
  private lastError: string | null = null;
  private closed = false;

  constructor(
    private readonly lib: ModbusLib,
    private readonly config: ModbusSourceConfig,
    private readonly log: (line: string) => void,
  ) {
    this.ladder = gatewayLadder(RETRY, `modbus: ${config.name} at ${this.address()}`, log);
  }

  /** Runs `fn` on the connection after the requests before it; rejects when the device is unreachable. */
  run<T>(fn: (c: ModbusRTU) => Promise<T>): Promise<T> {
    const result = this.chain.then(async () => {
      const client = await this.connection();
      try {
        return await fn(client);
      } catch (e) {
        this.readErrors++;
        this.lastError = (e as Error).message;
        if (client.isOpen) throw e;
        // A lost connection (not an exception the device answered with) is the device's failure, and is opened again.
        this.drop(client);
        throw new Unreachable((e as Error).message);
      }
    });
    this.chain = result.catch(() => {});
    return result;
  }

  stats(): ModbusPeerStats {
    return { name: this.config.name, connected: this.client?.isOpen ?? false, readErrors: this.readErrors, lastError: this.lastError };
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = null;
    if (client === null) return;
    // modbus-serial's TCP close ends the socket and answers on its 'close' event, which a socket the peer
    // already cut never emits again: stop() would wait for ever (seen when the PLC went down first).
    const closed = new Promise<void>((done) => client.close(() => done()));
    await withTimeout(closed, this.config.timeoutMs, 'close timed out').catch(() => client.destroy(() => {}));
  }

  private connection(): Promise<ModbusRTU> {
    if (this.closed) return Promise.reject(new Unreachable('closed'));
    if (this.client?.isOpen) return Promise.resolve(this.client);
    if (this.connecting !== null) return this.connecting;
    const wait = this.nextTryAt - performance.now();
    if (wait > 0) return Promise.reject(new Unreachable(`not connected to ${this.address()} (next try in ${Math.ceil(wait / 1000)} s)`));
    this.connecting = this.connect().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async connect(): Promise<ModbusRTU> {
    const client = new this.lib();
    try {
      await withTimeout(client.connectTCP(this.config.host, { port: this.config.port }), this.config.timeoutMs, 'connect timed out');
    } catch (e) {
      client.close(() => {});
      this.lastError = (e as Error).message;
      this.backOff((e as Error).message);
      throw new Unreachable(`cannot connect to ${this.address()}: ${(e as Error).message}`);
    }
    client.setID(this.config.unitId);
    client.setTimeout(this.config.timeoutMs);
    client.on('close', () => this.drop(client));
    this.client = client;
    this.ladder.succeed(performance.now());
    this.log(`modbus: connected to ${this.config.name} at ${this.address()} (unit ${this.config.unitId})`);
    return client;
  }

  private drop(client: ModbusRTU): void {
    if (this.client !== client) return;
    this.client = null;
    if (!this.closed) this.backOff('the connection was lost (reconnecting with backoff)');
    client.close(() => {});
  }

  /** The next connect waits the ladder's backoff (src/core/requests/backoff.ts). */
  private backOff(why: string): void {
    const now = performance.now();
    this.nextTryAt = now + this.ladder.fail(now, why);
  }

  private address(): string {
    return `${this.config.host}:${this.config.port}`;
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))]).finally(() => clearTimeout(timer));
}
