// The Node side of a scenario run: the real local service, the fault proxy in front of it, and the
// answers to the scenario's commands (protocol.ts). Both runners use it: the Node runner calls it
// directly, the XS harness answers the worker's issueCommand with it.
import http from 'node:http';
import net from 'node:net';
import { startService } from '../../src/service';
import type { RunningService } from '../../src/service';
import type { HttpRequest } from '../../src/core/host/host';
import type { Answers, Command, ConnectOutcome, HttpOutcome, Link, RawOutcome, SendOutcome } from '../scenarios/protocol';
import { runAdapterScenario } from '../moddable/context';
import type { AdapterScenario } from '../moddable/context';
import { Disk } from './disk';
import { DEVICE, SCENARIO_SEED, SERVICE_EPOCH_MS } from '../scenarios/seed';
import { FaultProxy, TAG_HEADER, readBody } from './fault-proxy';

/** Real time a request may take before the harness calls it a fault of its own (the service is local). */
const REAL_LIMIT_MS = 10_000;

/** A request the proxy holds: it will never be answered. */
type Pending = Extract<RawOutcome, { kind: 'pending' }>;

/** A kept-open connection of a device ('connect'): what came back on it and not yet answered, and whether it ended. */
interface Kept {
  socket: net.Socket;
  received: Buffer;
  ended: boolean;
  /** A request is on it. */
  busy: boolean;
  /** Called on every byte that comes and when the connection ends. */
  wake: () => void;
}

export class ScenarioBackend {
  /** Problems of the harness itself (not of the agent); a runner fails the scenario when there are any. */
  readonly errors: string[] = [];
  private virtualNow = 0;
  private nextId = 0;
  private held = new Map<string, { destroy(): void }>();
  private kept = new Map<string, Kept>();
  /** Requests the service is to store late (the proxy's `late`), by virtual time, oldest first. */
  private lateCommits: { at: number; commit: () => Promise<unknown> }[] = [];
  /** The files of the file stand-in. */
  readonly disk = new Disk();

  private constructor(
    private readonly service: RunningService,
    readonly proxy: FaultProxy,
  ) {}

  static async start(): Promise<ScenarioBackend> {
    let backend: ScenarioBackend | null = null;
    const service = await startService({ host: '127.0.0.1', port: 0, seed: SCENARIO_SEED, now: () => SERVICE_EPOCH_MS + (backend?.virtualNow ?? 0) });
    // A late commit falls due in virtual time, counted from the moment the agent gave up.
    const proxy = await FaultProxy.start(service.url, (ms, commit) => backend?.lateCommits.push({ at: backend.virtualNow + ms, commit }));
    backend = new ScenarioBackend(service, proxy);
    return backend;
  }

  /** The base URL the agent talks to: the proxy's. */
  get url(): string {
    return this.proxy.url;
  }

  async handle<C extends Command>(command: C): Promise<Answers[C['cmd']]> {
    return (await this.dispatch(command)) as Answers[C['cmd']];
  }

  /** Answers the commands of an XS worker (test/xs/harness.ts) from now on: each is one of protocol.ts's. */
  serve(worker: { onCommand: (message: unknown) => Promise<unknown> }): void {
    worker.onCommand = (message) => this.handle(message as Command);
  }

  async close(): Promise<void> {
    for (const req of this.held.values()) req.destroy();
    for (const conn of this.kept.values()) conn.socket.destroy();
    await this.proxy.close();
    await this.service.close();
    this.disk.remove();
  }

  private async dispatch(c: Command): Promise<unknown> {
    if ('t' in c) await this.moveTo(c.t);
    switch (c.cmd) {
      case 'http':
        return this.request(c.req);
      case 'settle':
        return this.settle(c.id);
      case 'faults':
        this.proxy.faults(c.rules);
        return null;
      case 'clear-faults':
        this.proxy.clearFaults();
        return null;
      case 'down':
        await this.proxy.setDown(c.down);
        return c.down ? this.endKept(() => true, (conn) => conn.socket.destroy()) : [];
      case 'close-idle':
        return this.endKept((conn) => !conn.busy, () => undefined, () => this.proxy.closeIdle());
      case 'get':
        return this.direct('GET', c.path, null);
      case 'create':
        return this.direct('POST', '/resource/' + c.resource + '/feeds', JSON.stringify({ input: c.input }));
      case 'stored':
        return this.proxy.stored;
      case 'probe':
        return probe(c.port);
      case 'raw':
        return this.raw(c.port, c.bytes);
      case 'connect':
        return this.connect(c.port);
      case 'send':
        return this.send(c.conn, c.bytes);
      case 'hangup':
        this.kept.get(c.conn)?.socket.destroy();
        this.kept.delete(c.conn);
        return null;
      case 'disk':
        return this.disk.run(c.op);
    }
  }

  /** The virtual time is now `t`: the late commits due by then reach the service first, in order. */
  private async moveTo(t: number): Promise<void> {
    this.virtualNow = t;
    this.lateCommits.sort((a, b) => a.at - b.at);
    while (this.lateCommits.length > 0 && this.lateCommits[0].at <= t) await this.lateCommits.shift()!.commit();
  }

  /** Makes the agent's request through the proxy; a request the proxy holds comes back as pending. */
  private async request(req: HttpRequest): Promise<HttpOutcome> {
    const target = new URL(req.url);
    if (target.hostname !== '127.0.0.1') {
      return { kind: 'network', message: 'the test harness connects to 127.0.0.1 only', maybeDelivered: false };
    }
    const id = String(++this.nextId);
    const fate = this.proxy.fate(id);
    const headers: http.OutgoingHttpHeaders = { ...req.headers, [TAG_HEADER]: id };
    if (req.body !== undefined) headers['content-length'] = Buffer.byteLength(req.body);
    const out = http.request({ host: '127.0.0.1', port: target.port, path: target.pathname + target.search, method: req.method, headers, agent: false });
    const lost = (error: Error): HttpOutcome => ({ kind: 'network', message: error.message, maybeDelivered: fate.forwarded || fate.taken });
    const answered = new Promise<HttpOutcome>((resolve) => {
      out.on('response', (res) => {
        const header = (name: string): string | null => {
          const value = res.headers[name];
          return typeof value === 'string' ? value : null;
        };
        readBody(res).then(
          (body) => resolve({ kind: 'response', status: res.statusCode ?? 0, retryAfter: header('retry-after'), date: header('date'), location: header('location'), body }),
          (error: Error) => resolve(lost(error)),
        );
      });
      out.on('error', (error) => resolve(lost(error)));
    });
    out.end(req.body);
    const tooLong: HttpOutcome = { kind: 'network', message: 'harness limit', maybeDelivered: true };
    return this.outcome(id, req.method + ' ' + target.pathname, out, answered, tooLong);
  }

  /**
   * Writes a request's bytes over a new connection, as the SDK's Request does, and answers with what came
   * back; a request the proxy holds comes back as pending. The proxy's tag goes after the request line.
   */
  private async raw(port: number, text: string): Promise<RawOutcome> {
    const id = String(++this.nextId);
    const bytes = Buffer.from(text, 'latin1');
    const line = bytes.indexOf('\r\n') + 2;
    const tagged = Buffer.concat([bytes.subarray(0, line), Buffer.from(TAG_HEADER + ': ' + id + '\r\n'), bytes.subarray(line)]);
    const socket = net.connect(port, '127.0.0.1');
    const answered = new Promise<RawOutcome>((resolve) => {
      const chunks: Buffer[] = [];
      let connected = false;
      socket.on('connect', () => {
        connected = true;
        socket.write(tagged);
      });
      socket.on('data', (chunk) => chunks.push(chunk));
      socket.on('end', () => resolve({ kind: 'answer', bytes: Buffer.concat(chunks).toString('latin1'), broken: false }));
      socket.on('error', () => resolve(connected ? { kind: 'answer', bytes: Buffer.concat(chunks).toString('latin1'), broken: true } : { kind: 'refused' }));
    });
    return this.outcome(id, text.slice(0, text.indexOf('\r\n')), socket, answered, { kind: 'answer', bytes: '', broken: true });
  }

  /** Opens a connection that stays open: the device's one connection of the keep-alive host. */
  private connect(port: number): Promise<ConnectOutcome> {
    return new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      const conn: Kept = { socket, received: Buffer.alloc(0), ended: false, busy: false, wake: () => undefined };
      socket.on('connect', () => {
        const id = 'c' + ++this.nextId;
        this.kept.set(id, conn);
        resolve({ kind: 'connected', conn: id });
      });
      socket.on('data', (chunk: Buffer) => {
        conn.received = Buffer.concat([conn.received, chunk]);
        conn.wake();
      });
      socket.on('close', () => {
        conn.ended = true;
        conn.wake();
      });
      socket.on('error', () => resolve({ kind: 'refused' }));
    });
  }

  /**
   * Writes a request on a kept-open connection, tagged as `raw` tags it, and answers with one response:
   * complete by its Content-Length, or what came before the connection ended.
   */
  private async send(connId: string, text: string): Promise<SendOutcome> {
    const conn = this.kept.get(connId);
    if (conn === undefined || conn.ended) return { kind: 'answer', bytes: '', closed: true };
    const id = String(++this.nextId);
    conn.busy = true;
    conn.received = Buffer.alloc(0);
    const bytes = Buffer.from(text, 'latin1');
    const line = bytes.indexOf('\r\n') + 2;
    conn.socket.write(Buffer.concat([bytes.subarray(0, line), Buffer.from(TAG_HEADER + ': ' + id + '\r\n'), bytes.subarray(line)]));
    const answered = new Promise<SendOutcome>((resolve) => {
      conn.wake = () => {
        const end = responseEnd(conn.received);
        if (end === null && !conn.ended) return;
        conn.wake = () => undefined;
        resolve({ kind: 'answer', bytes: conn.received.subarray(0, end ?? conn.received.length).toString('latin1'), closed: conn.ended });
      };
      conn.wake();
    });
    const outcome = await this.outcome(id, text.slice(0, text.indexOf('\r\n')), conn.socket, answered, { kind: 'answer', bytes: '', closed: true }, true);
    conn.busy = false;
    return outcome;
  }

  /**
   * Ends the kept-open connections `which` picks, by `end` or by the server (`serverSide`), and answers
   * their ids once each has ended (at most a second of real time each).
   */
  private async endKept(which: (conn: Kept) => boolean, end: (conn: Kept) => void, serverSide?: () => void): Promise<string[]> {
    const picked = [...this.kept].filter(([, conn]) => !conn.ended && which(conn));
    const gone = picked.map(([, conn]) => new Promise<void>((resolve) => {
      const limit = setTimeout(resolve, 1_000);
      conn.socket.once('close', () => {
        clearTimeout(limit);
        resolve();
      });
    }));
    for (const [, conn] of picked) end(conn);
    serverSide?.();
    await Promise.all(gone);
    return picked.filter(([, conn]) => conn.ended).map(([id]) => id);
  }

  /**
   * What became of request `id` on `connection`: `answered`, or pending once the proxy holds it (the
   * connection then kept for settle). With neither within REAL_LIMIT_MS of real time, a harness error
   * (`what` names the request) and `tooLong`.
   */
  private async outcome<T extends { kind: string }>(id: string, what: string, connection: { destroy(): void }, answered: Promise<T>, tooLong: T, kept = false): Promise<T | Pending> {
    let limit: NodeJS.Timeout | undefined;
    const late = new Promise<T>((resolve) => {
      limit = setTimeout(() => {
        this.errors.push(what + ': no answer and no hold within ' + REAL_LIMIT_MS + ' ms of real time');
        resolve(tooLong);
      }, REAL_LIMIT_MS);
    });
    const outcome = await Promise.race([answered, this.proxy.fate(id).held.then((): Pending => ({ kind: 'pending', id })), late]);
    clearTimeout(limit);
    if (outcome.kind === 'pending') this.held.set(id, connection);
    else {
      // A kept-open connection outlives its request.
      if (!kept) connection.destroy();
      this.proxy.release(id);
    }
    return outcome;
  }

  /** The virtual timeout of a held request fired: drop the connection, say whether the service may have it. */
  private async settle(id: string): Promise<{ maybeDelivered: boolean }> {
    const fate = this.proxy.fate(id);
    this.held.get(id)?.destroy();
    this.held.delete(id);
    // The proxy has seen the client go (and scheduled a late commit) before time moves on.
    await fate.gone;
    this.proxy.release(id);
    return { maybeDelivered: fate.forwarded || fate.taken };
  }

  /** A request straight to the service, outside the agent's view; answers the parsed envelope. */
  private async direct(method: 'GET' | 'POST', path: string, body: string | null): Promise<unknown> {
    const headers: Record<string, string> = {};
    if (body !== null) {
      headers['content-type'] = 'application/json';
      headers.authorization = 'Bearer ' + DEVICE.token;
    }
    const res = await fetch(this.service.url + '/api/device/' + DEVICE.publicKey + path, { method, headers, body });
    return res.json();
  }
}

/** Runs `work` against a fresh service and proxy; fails when the harness itself had trouble. */
export async function withBackend<T>(work: (backend: ScenarioBackend) => Promise<T>): Promise<T> {
  const backend = await ScenarioBackend.start();
  try {
    const result = await work(backend);
    if (backend.errors.length > 0) throw new Error('harness: ' + backend.errors.join('; '));
    return result;
  } finally {
    await backend.close();
  }
}

/** The Node run's link: the same JSON the XS worker would send and receive, without the worker. */
export function nodeLink(backend: ScenarioBackend): Link {
  return <C extends Command>(command: C) =>
    backend.handle(JSON.parse(JSON.stringify(command)) as C).then((answer) => JSON.parse(JSON.stringify(answer)) as Answers[C['cmd']]);
}

/**
 * An adapter scenario on Node against a fresh backend: it fails as its checks fail, and resolves with what
 * it saw, which the XS run must match; a scenario that resolves with nothing would make that match vacuous.
 */
export async function adapterOnNode(scenario: AdapterScenario): Promise<unknown> {
  const seen = await withBackend((backend) => runAdapterScenario(scenario, nodeLink(backend), (op) => backend.disk.run(op), backend.url));
  if (seen === undefined) throw new Error(scenario.name + ': the scenario resolved with nothing to compare');
  return seen;
}

/** Where the first response in `bytes` ends, by its Content-Length; null while it is incomplete or has none. */
function responseEnd(bytes: Buffer): number | null {
  const head = bytes.indexOf('\r\n\r\n');
  if (head < 0) return null;
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(bytes.subarray(0, head).toString('latin1'));
  if (length === null) return null;
  const end = head + 4 + Number(length[1]);
  return bytes.length >= end ? end : null;
}

/** Whether something accepts connections on 127.0.0.1:port. */
function probe(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}
