// The real parts the gateway's tests run against, all on 127.0.0.1: the local service (with its /_local/
// API to read every stored feed in order), an embedded aedes broker, Debian's mosquitto, and a Modbus TCP
// device (modbus-serial's ServerTCP).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { startService } from '../../src/service';
import type { RunningService, Seed } from '../../src/service';
import { track } from '../support/children';

export const SEED: Seed = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'examples', 'gateway-seed.json'), 'utf8'));
export const BAYS = SEED.devices.map((d) => ({ publicKey: d.public_key, token: d.token, name: d.name, ids: d.resources.map((r) => r.id_resource) }));

export function tempDir(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The local service with the gateway seed (three bays), its dashboard API on for reading feeds back. */
export function startLocalService(now?: () => number): Promise<RunningService> {
  return startService({ seed: SEED, dashboard: {}, ...(now === undefined ? {} : { now }) });
}

/** Every stored value of a resource, oldest first. */
export async function storedValues(serviceUrl: string, resource: number): Promise<string[]> {
  const out: string[] = [];
  let after: number | null = null;
  for (;;) {
    const res = await fetch(`${serviceUrl}/_local/resources/${resource}/feeds?limit=10000${after === null ? '' : `&after=${after}`}`);
    const page = ((await res.json()) as { payload: unknown }).payload as { raw_data: string[]; next: number | null };
    out.push(...page.raw_data);
    if (page.next === null) return out;
    after = page.next;
  }
}

/** The resource's record as the service shows it (presence included), read silently. */
export async function resourceRecord(serviceUrl: string, publicKey: string, resource: number): Promise<{ is_alive: boolean; lifetime_updated_at: string | null }> {
  const res = await fetch(`${serviceUrl}/api/device/${publicKey}/resource/${resource}?silent=true`);
  return ((await res.json()) as { payload: { is_alive: boolean; lifetime_updated_at: string | null } }).payload;
}

export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting for ' + what);
    await sleep(50);
  }
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** An embedded aedes broker; `restart()` drops every connection and listens again on the same port, sessions kept. */
export class AedesBroker {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;

  private constructor(readonly broker: import('aedes').Aedes) {}

  static async start(): Promise<AedesBroker> {
    const { Aedes } = await import('aedes');
    const b = new AedesBroker(await Aedes.createBroker());
    await b.listen(0);
    return b;
  }

  get url(): string {
    return `mqtt://127.0.0.1:${this.port}`;
  }

  async listen(port: number): Promise<void> {
    const server = createServer((socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      this.broker.handle(socket);
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  /** Stops listening and cuts every connection (the broker's sessions stay). */
  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.destroy();
    if (server !== null) await new Promise((resolve) => server.close(resolve));
  }

  async close(): Promise<void> {
    await this.down();
    await new Promise<void>((resolve) => this.broker.close(() => resolve()));
  }
}

/** Where Debian's mosquitto is, or null (the reason to skip). */
export function mosquittoPath(): string | null {
  for (const p of ['/usr/sbin/mosquitto', '/usr/bin/mosquitto']) {
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not there
    }
  }
  return null;
}

/** Debian's mosquitto on a free loopback port, with its own config: persistence on, offline queue raised. */
export class Mosquitto {
  child: ChildProcess | null = null;
  log = '';

  private constructor(
    readonly bin: string,
    readonly dir: string,
    readonly port: number,
  ) {}

  static async start(bin: string, dir: string, extra: string[] = []): Promise<Mosquitto> {
    const m = new Mosquitto(bin, dir, await freePort());
    writeFileSync(
      join(dir, 'mosquitto.conf'),
      [
        `listener ${m.port} 127.0.0.1`,
        'allow_anonymous true',
        // Started as root, mosquitto would drop to the "mosquitto" user, which cannot read this folder.
        `user ${userInfo().username}`,
        'persistence true',
        `persistence_location ${dir}/`,
        'max_queued_messages 100000',
        'max_inflight_messages 100',
        ...extra,
      ].join('\n') + '\n',
    );
    await m.run();
    return m;
  }

  get url(): string {
    return `mqtt://127.0.0.1:${this.port}`;
  }

  async run(): Promise<void> {
    const child = track(spawn(this.bin, ['-c', join(this.dir, 'mosquitto.conf')], { stdio: ['ignore', 'pipe', 'pipe'] }));
    child.stdout!.on('data', (d) => (this.log += d));
    child.stderr!.on('data', (d) => (this.log += d));
    this.child = child;
    await waitFor('mosquitto to listen', () => this.log.includes('running') || this.log.includes(`port ${this.port}`), 10_000).catch(async () => {
      await sleep(500);
    });
  }

  /** SIGTERM: mosquitto saves its persistence file on the way out. */
  async stop(): Promise<void> {
    const child = this.child;
    if (child === null || child.exitCode !== null) return;
    await new Promise((resolve) => {
      child.once('close', resolve);
      child.kill('SIGTERM');
    });
    this.child = null;
  }
}

/**
 * A Modbus TCP device answering like a PLC: holding and input registers and coils in arrays; `slowMs`
 * delays its answers, `down()` closes it (connections cut) and `up()` brings it back on the same port.
 */
export class ModbusDevice {
  readonly holding = new Array<number>(64).fill(0);
  readonly input = new Array<number>(64).fill(0);
  readonly coils = new Array<boolean>(64).fill(false);
  slowMs = 0;
  private server: { close(cb: (e: Error | null) => void): void; socks: Map<Socket, 0> } | null = null;

  private constructor(readonly port: number) {}

  static async start(): Promise<ModbusDevice> {
    const d = new ModbusDevice(await freePort());
    await d.up();
    return d;
  }

  async up(): Promise<void> {
    const { ServerTCP } = await import('modbus-serial');
    const delay = async <T>(v: T): Promise<T> => {
      if (this.slowMs > 0) await sleep(this.slowMs);
      return v;
    };
    const server = new ServerTCP(
      {
        getHoldingRegister: (addr: number) => delay(this.holding[addr]),
        getInputRegister: (addr: number) => delay(this.input[addr]),
        getCoil: (addr: number) => delay(this.coils[addr]),
        getDiscreteInput: (addr: number) => delay(this.coils[addr]),
        setRegister: (addr: number, value: number) => {
          this.holding[addr] = value;
        },
        setCoil: (addr: number, value: boolean) => {
          this.coils[addr] = value;
        },
      },
      { host: '127.0.0.1', port: this.port, unitID: 1 },
    );
    await new Promise<void>((resolve, reject) => {
      server.on('initialized', () => resolve());
      server.on('serverError', reject);
    });
    this.server = server as unknown as NonNullable<ModbusDevice['server']>;
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server === null) return;
    for (const sock of server.socks.keys()) sock.destroy();
    await new Promise((resolve) => server.close(() => resolve(undefined)));
  }
}

/** `feed-agent gateway ARGS` in a child process (the built CLI), its output kept. */
export class GatewayChild {
  readonly child: ChildProcess;
  out = '';
  readonly exited: Promise<number | null>;

  constructor(cli: string, args: string[], env: NodeJS.ProcessEnv) {
    this.child = track(spawn(process.execPath, [cli, 'gateway', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } }));
    this.child.stdout!.setEncoding('utf8').on('data', (d: string) => (this.out += d));
    this.child.stderr!.setEncoding('utf8').on('data', (d: string) => (this.out += d));
    this.exited = new Promise((resolve) => this.child.on('close', (code) => resolve(code)));
  }

  async waitForLine(pattern: RegExp, timeoutMs = 15_000): Promise<void> {
    await waitFor(`${pattern} in the gateway's output:\n${this.out}`, () => pattern.test(this.out), timeoutMs);
  }
}
