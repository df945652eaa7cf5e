// A stand-in for the SDK's classic `Request` ("http", modules/network/http/http.js) that follows its
// callback protocol and talks to the real local service: the request's bytes go over a real connection
// (the wire), and the answer's bytes come back to be parsed as http.js parses them. It behaves as
// http.js does where the adapter must cope:
// - every socket event reaches the request through `request.socket.callback`, where the adapter wraps it;
// - with `body: true` the body is asked for fragment by fragment (message 0) with the socket's room, and
//   nothing adds a Content-Length: the adapter must;
// - a refused connection throws "write failed" from the first write (lin's socket) or ends in message
//   -2 (lwip's), as `refusal` says; so does the write of the last fragment with `failLastWrite`; a status line of fewer than three parts throws "unexpected status
//   format"; an answer shorter than its Content-Length ends in message -2; a chunked body is offered as
//   its chunks' data;
// - without `response`, the body comes as message 4 with the count that arrived (at most a socket
//   buffer's), which must be read with `read` inside it, then message 5; every message after `close()`
//   is dropped.
import type { RequestClass, RequestOptions, SdkRequest } from '../../../platforms/moddable/host/sdk';
import { HEADER, REQUEST_FRAGMENT, RESPONSE_COMPLETE, RESPONSE_FRAGMENT, STATUS } from '../../../platforms/moddable/host/sdk';
import type { RawOutcome } from '../../scenarios/protocol';
import { bytesOf, latin1, utf8Bytes } from './bytes';

/** The network under the stand-in: a connection attempt, and one exchange of bytes (latin1 strings). */
export interface Wire {
  connects(port: number): Promise<boolean>;
  exchange(port: number, bytes: string): Promise<RawOutcome>;
  /** The request was closed while the other side held it: drop the connection. */
  drop(id: string): void;
}

export interface RequestStandInOptions {
  wire: Wire;
  /** The room the socket reports for each write: 1,024 bytes on lin. */
  room?: number;
  /** A refused connection: 'throw' as lin's socket does, 'error' (message -2) as lwip's does. */
  refusal?: 'throw' | 'error';
  /** Each request's bytes as they were written, for the test to look at. */
  written?: string[];
  /** The write of the last fragment throws "write failed", as lin's socket does: the socket took none of it. */
  failLastWrite?: boolean;
  /**
   * The connection is lost once the whole body was written, before the socket reports room again (on
   * lwip that waits for the peer's ACK): the service may have it all.
   */
  lostAfterBody?: boolean;
}

// Socket messages (modules/network/socket): connected, readable, writable, error.
const CONNECTED = 1, READABLE = 2, WRITABLE = 3, ERROR = -2;

export function requestStandIn(options: RequestStandInOptions): RequestClass {
  const room = options.room ?? 1024;
  return class StandInRequest implements SdkRequest {
    callback: SdkRequest['callback'] = () => undefined;
    readonly socket: { callback(message: number, value?: unknown): void };
    private closed = false;
    private held: string | null = null;
    private head = '';
    private body = '';
    private answer: RawOutcome | null = null;
    /** The body's bytes of the fragment being offered (message 4). */
    private fragmentBytes = '';

    constructor(private readonly d: RequestOptions) {
      // As a resolver or socket would throw in the constructor: nothing but loopback is reachable here.
      if (d.host !== '127.0.0.1') throw new Error('cannot resolve ' + d.host);
      if (d.Socket !== undefined) throw new Error('the stand-in has no TLS');
      if (d.body !== true || 'response' in d) throw new Error('the adapter streams the body and reads the answer fragment by fragment');
      this.socket = { callback: (message, value) => this.event(message, value) };
      void options.wire.connects(d.port).then((connected) => {
        if (connected || options.refusal === 'throw') this.socket.callback(CONNECTED, connected);
        else this.socket.callback(ERROR);
      });
    }

    read(type: typeof ArrayBuffer, count: number): ArrayBuffer | undefined {
      if (type !== ArrayBuffer) throw new Error('the stand-in reads ArrayBuffers only');
      const piece = this.fragmentBytes.slice(0, count);
      this.fragmentBytes = this.fragmentBytes.slice(piece.length);
      return bytesOf(piece);
    }

    close(): void {
      this.closed = true;
      if (this.held !== null) options.wire.drop(this.held);
      this.held = null;
    }

    private event(message: number, value?: unknown): void {
      if (this.closed) return;
      if (message === CONNECTED) {
        if (value === false) throw new Error('write failed');
        this.head = this.d.method + ' ' + this.d.path + ' HTTP/1.1\r\nConnection: close\r\n';
        const headers = this.d.headers;
        let host = true;
        for (let i = 0; i < headers.length; i += 2) {
          this.head += headers[i] + ': ' + headers[i + 1] + '\r\n';
          if (headers[i].toLowerCase() === 'host') host = false;
        }
        if (host) this.head += 'Host: ' + this.d.host + '\r\n';
        this.head += '\r\n';
        this.socket.callback(WRITABLE, room);
      } else if (message === WRITABLE) {
        const fragment = this.callback(REQUEST_FRAGMENT, value);
        if (fragment !== undefined) {
          // A string is written as its UTF-8 bytes, as the SDK's socket does; the adapter sends only ASCII ones.
          const bytes = typeof fragment === 'string' ? latin1(utf8Bytes(fragment)) : latin1(fragment as ArrayBuffer);
          const whole = this.body.length + bytes.length >= this.contentLength();
          // http.js writes the fragment inside this callback: the throw reaches the adapter's wrapper.
          if (whole && options.failLastWrite) throw new Error('write failed');
          this.body += bytes;
          // The next write is possible once this one went: another writable event, unless the line dies.
          void Promise.resolve().then(() => this.socket.callback(whole && options.lostAfterBody ? ERROR : WRITABLE, room));
          return;
        }
        const bytes = this.head + this.body;
        options.written?.push(bytes);
        void options.wire.exchange(this.d.port, bytes).then((answer) => {
          this.answer = answer;
          if (answer.kind === 'pending') this.held = answer.id;
          else this.socket.callback(answer.kind === 'refused' ? ERROR : READABLE);
        });
      } else if (message === READABLE) {
        this.parse(this.answer as Extract<RawOutcome, { kind: 'answer' }>);
      } else {
        this.finish(ERROR);
      }
    }

    /** The Content-Length the adapter gave, or 0. */
    private contentLength(): number {
      const headers = this.d.headers;
      for (let i = 0; i < headers.length; i += 2) if (headers[i].toLowerCase() === 'content-length') return Number(headers[i + 1]);
      return 0;
    }

    /** The answer as http.js reads it: status line, headers, then the body by its Content-Length. */
    private parse(answer: Extract<RawOutcome, { kind: 'answer' }>): void {
      const end = answer.bytes.indexOf('\r\n\r\n');
      if (end < 0) return this.finish(ERROR);
      const lines = answer.bytes.slice(0, end).split('\r\n');
      const status = lines[0].split(' ');
      if (status.length < 3) throw new Error('unexpected status format');
      this.callback(STATUS, parseInt(status[1]));
      let length = -1;
      let chunked = false;
      for (const line of lines.slice(1)) {
        if (this.closed) return;
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim().toLowerCase();
        const data = line.slice(colon + 1).trim();
        this.callback(HEADER, name, data);
        if (name === 'content-length') length = parseInt(data);
        if (name === 'transfer-encoding' && data.toLowerCase() === 'chunked') chunked = true;
      }
      let body = answer.bytes.slice(end + 4);
      if (chunked) body = dechunk(body);
      else if (length >= 0) body = body.slice(0, length);
      // In the socket buffer's fragments, each read inside its message, as http.js offers them.
      for (let at = 0; at < body.length && !this.closed; at += room) {
        this.fragmentBytes = body.slice(at, at + room);
        this.callback(RESPONSE_FRAGMENT, this.fragmentBytes.length);
      }
      if (this.closed) return;
      if (length >= 0 ? body.length < length : answer.broken) return this.finish(ERROR);
      this.finish(RESPONSE_COMPLETE);
    }

    private finish(message: number): void {
      if (this.closed) return;
      try {
        this.callback(message);
      } finally {
        this.close();
      }
    }
  };
}

/** The data of a chunked body's chunks, as far as they came whole. */
function dechunk(body: string): string {
  let data = '';
  let at = 0;
  for (;;) {
    const line = body.indexOf('\r\n', at);
    if (line < 0) return data;
    const size = parseInt(body.slice(at, line), 16);
    if (!(size > 0) || line + 2 + size > body.length) return data;
    data += body.slice(line + 2, line + 2 + size);
    at = line + 2 + size + 2;
  }
}
