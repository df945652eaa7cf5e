// A TCP proxy on 127.0.0.1 in front of a service on 127.0.0.1, below HTTP: the ways a network fails a
// device that no HTTP answer can play (load balancers without a healthy backend, port forwards whose far
// end is gone, firewalls, half-broken backends). The test switches its mode as it runs; the HTTP-level
// proxy (fault-proxy.ts) plays broken answers instead. Modes:
// - `pass`: bytes both ways;
// - `accept-close`: each connection is closed at accept, before a byte;
// - `reset-writes`: a `POST …/feeds` is reset (RST) once its headers and body are in, without reaching the
//   service; every other request passes (a partial outage: reads answered, writes reset);
// - `reset-all`: every request is reset so;
// - `blackhole`: connections are accepted and read, never answered, never closed;
// - `refuse`: nothing listens (connections are refused); the same port listens again when it ends;
// - `stall`: a request reaches the service, and its answer's headers and half its body come back, then
//   nothing more;
// - `tls-stall`: as `blackhole`, for an https URL: the ClientHello is read and never answered.
// When a fault begins, the connections open are destroyed: a kept-alive socket would otherwise go on
// working through it. Connections made during a fault keep its behaviour after it ends, as a stalled
// backend's would. Each mode's window counts the connections and the requests (method and path) seen in
// it, with their times, and, in passing modes, the service's status for each.
import { createConnection, createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { operationOf } from '../scenarios/operation';

export type TcpMode = 'pass' | 'accept-close' | 'reset-writes' | 'reset-all' | 'blackhole' | 'refuse' | 'stall' | 'tls-stall';

export interface SeenRequest {
  /** Date.now() when the whole request was in. */
  at: number;
  method: string;
  path: string;
  /** The service's status, once its answer passed back through the proxy. */
  status?: number;
  answeredAt?: number;
}

export interface ModeWindow {
  mode: TcpMode;
  /** Date.now() when it began, and when it ended (null while it lasts). */
  from: number;
  to: number | null;
  /** When each connection was accepted. */
  connections: number[];
  requests: SeenRequest[];
  /** When each TLS ClientHello was read (the first bytes of a connection that speaks TLS). */
  clientHellos: number[];
}

/** The first byte of a TLS connection: a handshake record, the ClientHello. */
const TLS_HANDSHAKE = 0x16;

export class TcpFaultProxy {
  readonly windows: ModeWindow[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly target: number,
  ) {
    this.windows.push(window('pass'));
    server.on('connection', (client) => this.accept(client));
  }

  /** Listens on a free port of 127.0.0.1 in front of `upstream` (`http://127.0.0.1:PORT` or `https://…`), in `pass`. */
  static async start(upstream: string): Promise<TcpFaultProxy> {
    const target = new URL(upstream);
    if (target.hostname !== '127.0.0.1') throw new Error('the TCP fault proxy only forwards to 127.0.0.1, not ' + target.hostname);
    const server = createServer();
    await listen(server, 0);
    return new TcpFaultProxy(server, (server.address() as AddressInfo).port, Number(target.port));
  }

  /** `http://127.0.0.1:PORT` (or https: the proxy passes TLS as bytes). */
  url(scheme: 'http' | 'https' = 'http'): string {
    return scheme + '://127.0.0.1:' + this.port;
  }

  get mode(): TcpMode {
    return this.current.mode;
  }

  /** The mode from now on; a fault destroys the connections open. */
  async set(mode: TcpMode): Promise<void> {
    const was = this.current.mode;
    if (mode === was) return;
    this.current.to = Date.now();
    this.windows.push(window(mode));
    if (mode !== 'pass') this.dropConnections();
    if (mode === 'refuse') await new Promise((resolve) => this.server.close(resolve));
    if (was === 'refuse') await listen(this.server, this.port);
  }

  async close(): Promise<void> {
    this.dropConnections();
    if (this.server.listening) await new Promise((resolve) => this.server.close(resolve));
  }

  private get current(): ModeWindow {
    return this.windows[this.windows.length - 1];
  }

  /** Destroys the connections open, both sides: a fault of another layer (a name that stops resolving) begins. */
  dropConnections(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  private track(socket: Socket): Socket {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => {});
    return socket;
  }

  private accept(client: Socket): void {
    const mode = this.current.mode;
    this.current.connections.push(Date.now());
    this.track(client);
    if (mode === 'accept-close') return void client.destroy();
    if (mode === 'blackhole' || mode === 'tls-stall') return this.hold(client);
    this.forward(client, mode);
  }

  /** Reads and counts what comes, never answers, never closes. */
  private hold(client: Socket): void {
    const requests = new RequestCutter();
    let http: boolean | null = null;
    client.on('data', (chunk: Buffer) => {
      http ??= this.speaksHttp(chunk);
      if (http) for (const request of requests.push(chunk)) this.current.requests.push(seen(request));
    });
  }

  /** Whether a connection whose first bytes are `first` speaks HTTP (else TLS, counted, or other bytes). */
  private speaksHttp(first: Buffer): boolean {
    if (first[0] === TLS_HANDSHAKE) this.current.clientHellos.push(Date.now());
    return first[0] >= 0x41 && first[0] <= 0x5a;
  }

  /** Forwards requests to the service as they come in whole, but for those `mode` resets. */
  private forward(client: Socket, mode: TcpMode): void {
    const upstream = this.track(createConnection(this.target, '127.0.0.1'));
    // Either side going away ends the other: the proxy never keeps half a connection.
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    const requests = new RequestCutter();
    // TLS (an https URL) is passed as bytes: nothing in it can be read.
    let http: boolean | null = null;
    let awaiting: SeenRequest | null = null;
    const stall = mode === 'stall' ? new AnswerStall() : null;
    client.on('data', (chunk: Buffer) => {
      http ??= this.speaksHttp(chunk);
      if (!http) return void upstream.write(chunk);
      for (const request of requests.push(chunk)) {
        const noted = seen(request);
        this.current.requests.push(noted);
        if (mode === 'reset-all' || (mode === 'reset-writes' && isWrite(request))) {
          upstream.destroy();
          return void client.resetAndDestroy();
        }
        awaiting = noted;
        upstream.write(request.bytes);
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      if (awaiting !== null && chunk.subarray(0, 9).toString('latin1') === 'HTTP/1.1 ') {
        awaiting.status = Number(chunk.subarray(9, 12).toString('latin1'));
        awaiting.answeredAt = Date.now();
        awaiting = null;
      }
      const out = stall === null ? chunk : stall.pass(chunk);
      if (out.length > 0) client.write(out);
    });
  }
}

/** A `POST …/feeds`: operation 4, or 3. */
function isWrite(request: WholeRequest): boolean {
  const operation = operationOf(request.method, request.path);
  return operation === 'create' || operation === 'create-one';
}

function window(mode: TcpMode): ModeWindow {
  return { mode, from: Date.now(), to: null, connections: [], requests: [], clientHellos: [] };
}

function seen(request: WholeRequest): SeenRequest {
  return { at: Date.now(), method: request.method, path: request.path };
}

async function listen(server: Server, port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
}

interface WholeRequest {
  method: string;
  path: string;
  /** Its head and its body, as they came. */
  bytes: Buffer;
}

/** Cuts a client's bytes into whole HTTP/1.1 requests: a head, and a body of its Content-Length (the agent never sends a chunked one). */
class RequestCutter {
  private held: Buffer = Buffer.alloc(0);

  /** The requests that `chunk` completed. */
  push(chunk: Buffer): WholeRequest[] {
    this.held = this.held.length === 0 ? chunk : Buffer.concat([this.held, chunk]);
    const out: WholeRequest[] = [];
    for (let end = this.held.indexOf('\r\n\r\n'); end !== -1; end = this.held.indexOf('\r\n\r\n')) {
      const head = this.held.subarray(0, end).toString('latin1');
      const total = end + 4 + contentLength(head);
      if (this.held.length < total) break;
      const [method, path] = head.split('\r\n', 1)[0].split(' ');
      out.push({ method, path, bytes: this.held.subarray(0, total) });
      this.held = this.held.subarray(total);
    }
    return out;
  }
}

function contentLength(head: string): number {
  return Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
}

/** Lets an answer's head and half its body (by its Content-Length, else half of what came with the head) through, then nothing. */
class AnswerStall {
  private head: Buffer = Buffer.alloc(0);
  private left: number | null = null;

  pass(chunk: Buffer): Buffer {
    if (this.left !== null) return this.take(chunk);
    this.head = Buffer.concat([this.head, chunk]);
    const end = this.head.indexOf('\r\n\r\n');
    if (end === -1) return Buffer.alloc(0);
    const text = this.head.subarray(0, end).toString('latin1');
    const body = this.head.subarray(end + 4);
    this.left = Math.floor((/\r\ncontent-length:/i.test(text) ? contentLength(text) : body.length) / 2);
    return Buffer.concat([this.head.subarray(0, end + 4), this.take(body)]);
  }

  private take(chunk: Buffer): Buffer {
    const out = chunk.subarray(0, this.left ?? 0);
    this.left = (this.left ?? 0) - out.length;
    return out;
  }
}
