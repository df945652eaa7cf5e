// A platform the firmware does not control, played by a plain node:http proxy in front of the local
// service (through the fault proxy, which keeps what the service stored). The test switches what it
// plays: it passes; it answers with Transfer-Encoding: chunked, as nginx and CDNs do; it writes every
// answer a byte at a time; it answers a batch with 64 KB or 1 MB after the service stored it; it fails
// every request with a 500 or a reset (an outage); it redirects a batch, with 307 to itself (the answer
// is then at /moved/…, forwarded as the same request) or to another origin, which records whether a
// token reached it. It logs every request it took, with when and what it played.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { operationOf } from '../scenarios/operation';
import type { Operation } from '../scenarios/operation';

export type Play =
  | { do: 'pass' }
  | { do: 'chunked' }
  | { do: 'bytes' }
  /** Operation 4 only: the service stores the batch, the answer is `bytes` of junk, with a Content-Length or chunked. */
  | { do: 'large'; bytes: number; chunked: boolean }
  /** Every request: `status`, nothing forwarded. */
  | { do: 'status'; status: number }
  /** Every request: the connection destroyed, nothing forwarded. */
  | { do: 'reset' }
  /** Operation 4 only: `status` to the same path under /moved on this origin, or on another one. */
  | { do: 'redirect'; status: number; to: 'same' | 'other' };

export interface Taken {
  at: number;
  method: string;
  path: string;
  op: Operation;
  /** What the proxy played for it ('moved': forwarded after a redirect). */
  played: string;
  /** Whether it carried the device's token. */
  token: boolean;
}

const MOVED = '/moved';

export class PlatformProxy {
  readonly log: Taken[] = [];
  /** Requests that reached the other origin of a redirect, and whether each carried a token. */
  readonly elsewhere: { path: string; token: boolean }[] = [];
  play: Play = { do: 'pass' };
  private readonly server = http.createServer((req, res) => void this.handle(req, res));
  private readonly other = http.createServer((req, res) => {
    this.elsewhere.push({ path: req.url ?? '', token: req.headers.authorization !== undefined });
    res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"message":"not here"}');
  });
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly upstream: string) {
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
    });
  }

  static async start(upstream: string): Promise<PlatformProxy> {
    const proxy = new PlatformProxy(upstream);
    await Promise.all([proxy.server, proxy.other].map((s) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()))));
    return proxy;
  }

  get url(): string {
    return 'http://127.0.0.1:' + (this.server.address() as AddressInfo).port;
  }

  /** The other origin a redirect may name. */
  get otherUrl(): string {
    return 'http://127.0.0.1:' + (this.other.address() as AddressInfo).port;
  }

  /** The requests taken since `from` (ms since the epoch) of operation `op`. */
  since(from: number, op?: Operation): Taken[] {
    return this.log.filter((t) => t.at >= from && (op === undefined || t.op === op));
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await Promise.all([this.server, this.other].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = await readAll(req);
    const moved = (req.url ?? '').startsWith(MOVED + '/');
    const path = moved ? (req.url as string).slice(MOVED.length) : (req.url ?? '/');
    const op = operationOf(req.method ?? 'GET', path);
    const play = this.play;
    const batch = op === 'create' && !moved;
    const played = moved ? 'moved' : batch || (play.do !== 'large' && play.do !== 'redirect') ? play.do : 'pass';
    this.log.push({ at: Date.now(), method: req.method ?? '', path, op, played, token: req.headers.authorization !== undefined });
    if (played === 'status') return void res.writeHead((play as { status: number }).status, { 'Content-Type': 'application/json' }).end('{"message":"unavailable"}');
    if (played === 'reset') return void req.socket.destroy();
    if (played === 'redirect') {
      const redirect = play as Extract<Play, { do: 'redirect' }>;
      const location = (redirect.to === 'same' ? this.url + MOVED : this.otherUrl) + path;
      return void res.writeHead(redirect.status, { Location: location, 'Content-Length': '0' }).end();
    }
    let answer: Upstream;
    try {
      answer = await forward(this.upstream, req, path, body);
    } catch {
      return void req.socket.destroy();
    }
    if (played === 'large') return this.large(res, play as Extract<Play, { do: 'large' }>);
    if (played === 'chunked') return chunked(res, answer);
    if (played === 'bytes') return byteAtATime(req.socket, answer);
    res.writeHead(answer.status, { 'Content-Type': 'application/json', 'Content-Length': String(answer.body.length) }).end(answer.body);
  }

  /** 200 with `bytes` of junk; the device drops the connection early, which ends the writing. */
  private large(res: http.ServerResponse, play: Extract<Play, { do: 'large' }>): void {
    res.writeHead(200, play.chunked ? { 'Content-Type': 'application/json' } : { 'Content-Type': 'application/json', 'Content-Length': String(play.bytes) });
    const piece = Buffer.alloc(16_384, 0x78);
    let left = play.bytes;
    const more = (): void => {
      while (left > 0 && !res.destroyed) {
        const n = Math.min(left, piece.length);
        left -= n;
        if (!res.write(piece.subarray(0, n))) return void res.once('drain', more);
      }
      if (!res.destroyed) res.end();
    };
    more();
  }
}

interface Upstream {
  status: number;
  body: Buffer;
}

function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    stream.on('data', (part: Buffer) => parts.push(part));
    stream.on('end', () => resolve(Buffer.concat(parts)));
    stream.on('error', reject);
  });
}

function forward(upstream: string, req: http.IncomingMessage, path: string, body: Buffer): Promise<Upstream> {
  return new Promise((resolve, reject) => {
    const headers = { ...req.headers, 'content-length': String(body.length) };
    delete headers.host;
    const out = http.request(upstream + path, { method: req.method, headers }, (answer) => {
      readAll(answer).then((bytes) => resolve({ status: answer.statusCode ?? 502, body: bytes }), reject);
    });
    out.on('error', reject);
    out.end(body);
  });
}

/** The answer as chunks of 64 bytes, written at once: several chunks arrive in one read of the device. */
function chunked(res: http.ServerResponse, answer: Upstream): void {
  res.writeHead(answer.status, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
  for (let at = 0; at < answer.body.length; at += 64) res.write(answer.body.subarray(at, at + 64));
  res.end();
}

/**
 * The whole answer, status line first, one byte a write on the raw socket (no Nagle; the next byte after
 * the event loop's turn), so that the device reads it in pieces of a byte or a few; then the connection
 * closes.
 */
async function byteAtATime(socket: Socket, answer: Upstream): Promise<void> {
  const head = 'HTTP/1.1 ' + answer.status + ' ' + (http.STATUS_CODES[answer.status] ?? 'Status') + '\r\nContent-Type: application/json\r\nContent-Length: ' +
    answer.body.length + '\r\nConnection: close\r\n\r\n';
  const bytes = Buffer.concat([Buffer.from(head, 'latin1'), answer.body]);
  socket.setNoDelay(true);
  for (let i = 0; i < bytes.length && !socket.destroyed; i++) {
    socket.write(bytes.subarray(i, i + 1));
    await new Promise((resolve) => setImmediate(resolve));
  }
  socket.end();
}
