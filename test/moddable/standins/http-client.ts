// A stand-in for the SDK's ECMA-419 HTTP client (`embedded:network/http/client`,
// examples/io/tcp/httpclient/httpclient.js), written from its protocol, over whatever socket `io` it is
// given (the adapter's classic-stream.ts on the socket stand-in): the same calls in the same order.
// - The constructor resolves the host through `dns.io`, then makes `new socket.io({...socket, address,
//   host, port, onReadable, onWritable, onError})`; a throw there is reported through the client's onError.
// - Requests queue and go one after the other on the connection: the head as the client writes it
//   (`METHOD path HTTP/1.1`, a `host:` line, each header, a blank line) as room allows, then the body
//   through the request's onWritable while its Content-Length is not met. `write` beyond the room throws
//   "would block".
// - The answer is read a byte at a time ("number" format) up to the blank line: onHeaders(status, the
//   headers in `headersMask`), then onReadable(count) in "buffer" format until the Content-Length is met,
//   then onDone(null) in a later job. Without a Content-Length the answer ends only with the connection.
// - A socket error ends the connection: onDone(Error) for the current and every queued request (an answer
//   already complete is reported first), then the client's onError, then it closes itself; requests made
//   afterwards are never sent. A status line without two spaces is reported as an error, after which
//   httpclient.js reads on from its closed socket and throws: so does this one.
// Not modelled: chunked answers (the local service never sends them).
import type { ClientRequest, ClientRequestOptions, HttpClient, HttpClientOptions } from '../../../platforms/moddable/host/sdk';
import { bytesOf } from './bytes';

/** The ECMA-419 socket as the client uses it. */
interface Stream {
  format: 'number' | 'buffer';
  read(count?: number): number | ArrayBuffer;
  write(data: Uint8Array): number;
  close(): void;
}

type State = 'connecting' | 'idle' | 'head' | 'body' | 'status' | 'headers' | 'answer' | 'complete' | 'closed';

export class StandInHttpClient implements HttpClient {
  private socket: Stream | null = null;
  private state: State = 'connecting';
  private queue: ClientRequestOptions[] = [];
  private current: ClientRequestOptions | null = null;
  private readonly host: string;
  private readonly onError: HttpClientOptions['onError'];
  private writable = 0;
  private readable = 0;
  /** The head not yet written, as bytes. */
  private head: Uint8Array | null = null;
  /** Bytes of the body still to write, then of the answer still to read. */
  private remaining = 0;
  private line = '';
  private status = 0;
  private headers = new Map<string, string>();

  constructor(options: HttpClientOptions) {
    if (!options.host) throw new Error('host required');
    this.host = options.host;
    this.onError = options.onError;
    const resolver = new options.dns.io(options.dns);
    resolver.resolve({
      host: options.host,
      onResolved: (host, address) => {
        try {
          const io = options.socket.io as unknown as new (o: object) => Stream;
          this.socket = new io({
            ...options.socket,
            address,
            host,
            port: options.port,
            onReadable: (count: number) => this.onReadable(count),
            onWritable: (count: number) => this.onWritable(count),
            onError: () => this.fail(),
          });
        } catch (e) {
          this.fail(e);
        }
      },
      onError: () => this.fail(new Error('cannot resolve ' + options.host)),
    });
  }

  request(options: ClientRequestOptions): ClientRequest {
    this.queue.push(options);
    if (this.state === 'idle') {
      this.next();
      void Promise.resolve().then(() => this.pump());
    }
    return this.requestOf(options);
  }

  close(): void {
    this.socket?.close();
    this.socket = null;
    this.queue = [];
    this.current = null;
    this.state = 'closed';
  }

  private requestOf(options: ClientRequestOptions): ClientRequest {
    const self = this;
    return {
      read(count: number): ArrayBuffer | undefined {
        if (self.current !== options) throw new Error('bad state');
        if (self.state !== 'answer') return undefined;
        const n = Math.min(count, self.readable, self.remaining);
        self.readable -= n;
        self.remaining -= n;
        const bytes = (self.socket as Stream).read(n) as ArrayBuffer;
        if (self.remaining === 0) {
          self.state = 'complete';
          void Promise.resolve().then(() => self.done());
        }
        return bytes;
      },
      write(data: Uint8Array): number {
        if (self.current !== options || self.state !== 'body') throw new Error('bad state');
        if (data.byteLength > self.writable || data.byteLength > self.remaining) throw new Error('would block');
        self.writable = (self.socket as Stream).write(data);
        self.remaining -= data.byteLength;
        if (self.remaining > 0) return Math.min(self.writable, self.remaining);
        self.state = 'status';
        return 0;
      },
    };
  }

  /** Takes the next queued request, if any, and composes its head. */
  private next(): void {
    const options = this.queue.shift() ?? null;
    this.current = options;
    if (options === null) {
      this.state = 'idle';
      return;
    }
    let head = options.method + ' ' + options.path + ' HTTP/1.1\r\nhost: ' + this.host + '\r\n';
    this.remaining = 0;
    options.headers.forEach((value, name) => {
      head += name + ': ' + value + '\r\n';
      if (name.toLowerCase() === 'content-length') this.remaining = Number(value);
    });
    this.head = new Uint8Array(bytesOf(head + '\r\n'));
    this.state = 'head';
    this.line = '';
  }

  private onWritable(count: number): void {
    this.writable = count;
    if (this.state === 'connecting') this.next();
    this.pump();
  }

  /** Writes what the room allows: the head, then the body through the request's onWritable. */
  private pump(): void {
    while (this.writable > 0 && this.current !== null) {
      const head = this.head;
      if (this.state === 'head' && head !== null) {
        const n = Math.min(head.length, this.writable);
        this.writable = (this.socket as Stream).write(head.subarray(0, n));
        this.head = n === head.length ? null : head.subarray(n);
        if (this.head === null) this.state = this.remaining > 0 ? 'body' : 'status';
      } else if (this.state === 'body') {
        const before = this.remaining;
        this.current.onWritable(Math.min(this.writable, this.remaining));
        if (this.remaining === before) return;
      } else return;
    }
  }

  private onReadable(count: number): void {
    this.readable = count;
    while (this.readable > 0) {
      if (this.state === 'answer') {
        (this.socket as Stream).format = 'buffer';
        (this.current as ClientRequestOptions).onReadable(Math.min(this.readable, this.remaining));
        return;
      }
      if (this.state !== 'status' && this.state !== 'headers') throw new Error('unexpected');
      const socket = this.socket as Stream;
      socket.format = 'number';
      while (this.readable > 0 && !this.line.endsWith('\n')) {
        this.readable--;
        this.line += String.fromCharCode(socket.read() as number);
      }
      if (!this.line.endsWith('\r\n')) return;
      const line = this.line;
      this.line = '';
      if (this.state === 'status') this.statusLine(line);
      else if (line !== '\r\n') this.header(line);
      else if (this.headersEnd()) return;
    }
  }

  private statusLine(line: string): void {
    const i = line.indexOf(' ');
    const j = line.indexOf(' ', i + 1);
    if (i < 0 || j < 0) {
      this.fail(new Error('bad response'));
      // httpclient.js reads on after reporting it, from the socket its error handling closed.
      throw new TypeError('cannot set property "format" of undefined');
    }
    this.status = parseInt(line.slice(i + 1, j));
    this.headers = new Map();
    this.remaining = Infinity;
    this.state = 'headers';
  }

  private header(line: string): void {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'content-length') this.remaining = parseInt(value);
    if ((this.current as ClientRequestOptions).headersMask.indexOf(name) >= 0) this.headers.set(name, value);
  }

  /** The blank line: onHeaders, then the body. Answers whether the client was closed meanwhile. */
  private headersEnd(): boolean {
    const current = this.current as ClientRequestOptions;
    if (this.status === 204 || this.status === 205) this.remaining = 0;
    current.onHeaders(this.status, this.headers);
    if (this.current !== current) return true;
    this.state = 'answer';
    if (this.remaining === 0) {
      this.state = 'complete';
      this.done();
      return true;
    }
    return false;
  }

  private done(): void {
    if (this.state !== 'complete') return;
    const current = this.current as ClientRequestOptions;
    current.onDone(null);
    if (this.state !== 'complete') return;
    this.next();
    if (this.current !== null) this.pump();
  }

  private fail(e?: unknown): void {
    if (this.state === 'closed') return;
    // An answer already complete is reported before the error.
    if (this.state === 'complete') this.done();
    const current = this.current;
    const queued = this.queue;
    this.current = null;
    this.queue = [];
    this.state = 'closed';
    current?.onDone(new Error());
    for (const request of queued) request.onDone(new Error());
    this.onError(e);
    this.close();
  }
}
