// A stand-in for the SDK's classic `Socket` ("socket", modules/network/socket) over a real connection to
// the local service that stays open: what the keep-alive host's client writes goes over the wire once it
// holds a whole request, and the response's bytes come back as the socket's readable messages. It
// behaves as the SDK's socket does where the adapter must cope:
// - message 1 once connected; a refused connection throws "write failed" from the first write (lin's
//   socket) or ends in message -2 (lwip's), as `refusal` says;
// - write() answers the room; write(data) takes all of it or throws; message 3 when room came back;
// - message 2 with the count of bytes to read, which must be read inside that callback: the rest is
//   dropped, as lin's socket drops it;
// - message -1 when the server closed the connection: after an answer that ended it, or when the test
//   says the service closed it (`lost`), as the network would tell the device;
// - every message after close() is dropped.
import type { ClassicSocket, ClassicSocketClass } from '../../../platforms/moddable/host/sdk';
import { SOCKET_CONNECTED, SOCKET_READABLE, SOCKET_WRITABLE } from '../../../platforms/moddable/host/sdk';
import type { ConnectOutcome, SendOutcome } from '../../scenarios/protocol';
import { bytesOf, latin1 } from './bytes';

/** The network under the stand-in: kept-open connections to 127.0.0.1. */
export interface KeptWire {
  connect(port: number): Promise<ConnectOutcome>;
  send(conn: string, bytes: string): Promise<SendOutcome>;
  hangup(conn: string): void;
  /** The request held by the proxy was given up: drop its connection. */
  drop(id: string): void;
}

export interface SocketStandInOptions {
  wire: KeptWire;
  /** The room the socket reports: 1,024 bytes, as the stand-in Request's. */
  room?: number;
  refusal?: 'throw' | 'error';
  /** The write that completes a request throws, as lin's socket throws "write failed": it took nothing. */
  failLastWrite?: boolean;
  /** The connection is lost once a whole request was taken, before an answer: the service may have it. */
  lostAfterRequest?: boolean;
  /** Every request's bytes as written, for the test to look at. */
  written?: string[];
  /** The open sockets by connection id, so that the test can tell them the service closed them. */
  open: Map<string, SocketStandIn>;
}

const CLOSED = -1, ERROR = -2;
/** Bytes a readable message carries at most: lin's socket buffer. */
const READ_BUFFER = 1536;

export interface SocketStandIn extends ClassicSocket {
  /** The service closed the connection (the test says so): message -1, unless the socket is closed. */
  lost(): void;
}

export function socketStandIn(options: SocketStandInOptions): ClassicSocketClass {
  const room = options.room ?? 1024;
  return class StandInSocket implements SocketStandIn {
    callback: ClassicSocket['callback'] = () => undefined;
    private conn: string | null = null;
    private refused = false;
    private closed = false;
    private held: string | null = null;
    /** What was written and not yet sent: part of a request. */
    private out = '';
    /** The bytes of the readable message being delivered. */
    private incoming = '';

    constructor(d: { host: string; port: number; secure?: unknown }) {
      // As a resolver would fail: nothing but loopback is reachable here.
      if (d.host !== '127.0.0.1') throw new Error('cannot resolve ' + d.host);
      if (d.secure !== undefined) throw new Error('the stand-in has no TLS');
      void options.wire.connect(d.port).then((outcome) => {
        if (this.closed) {
          if (outcome.kind === 'connected') options.wire.hangup(outcome.conn);
          return;
        }
        if (outcome.kind === 'connected') {
          this.conn = outcome.conn;
          options.open.set(outcome.conn, this);
        } else this.refused = true;
        this.event(outcome.kind === 'connected' || options.refusal === 'throw' ? SOCKET_CONNECTED : ERROR);
      });
    }

    read(type: typeof Number): number;
    read(type: typeof ArrayBuffer, count: number): ArrayBuffer;
    read(): number;
    read(type?: typeof Number | typeof ArrayBuffer, count?: number): number | ArrayBuffer {
      if (type === undefined) return this.incoming.length;
      const n = type === Number ? 1 : Math.min(count as number, this.incoming.length);
      const taken = this.incoming.slice(0, n);
      this.incoming = this.incoming.slice(n);
      return type === Number ? taken.charCodeAt(0) : bytesOf(taken);
    }

    write(data: ArrayBuffer | Uint8Array): void;
    write(): number;
    write(data?: ArrayBuffer | Uint8Array): number | void {
      if (data === undefined) return room;
      if (this.closed) throw new Error('write on closed socket');
      if (this.refused) throw new Error('write failed');
      if (data.byteLength > room) throw new Error("can't write all data");
      const bytes = data instanceof Uint8Array ? latin1(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer) : latin1(data);
      const whole = requestEnd(this.out + bytes);
      if (whole !== null && options.failLastWrite) throw new Error('write failed');
      this.out += bytes;
      if (whole !== null) {
        const request = this.out;
        this.out = '';
        options.written?.push(request);
        if (options.lostAfterRequest) void Promise.resolve().then(() => this.event(ERROR));
        else void Promise.resolve().then(() => this.send(request));
      }
      // Room comes back once this write went, unless the line died meanwhile.
      void Promise.resolve().then(() => this.event(SOCKET_WRITABLE, room));
    }

    close(): void {
      if (this.closed) return;
      this.closed = true;
      if (this.held !== null) options.wire.drop(this.held);
      else if (this.conn !== null) options.wire.hangup(this.conn);
      if (this.conn !== null) options.open.delete(this.conn);
    }

    lost(): void {
      this.event(CLOSED);
    }

    private send(request: string): void {
      void options.wire.send(this.conn as string, request).then((outcome) => {
        if (outcome.kind === 'pending') {
          this.held = outcome.id;
          return;
        }
        for (let at = 0; at < outcome.bytes.length && !this.closed; at += READ_BUFFER) {
          this.incoming = outcome.bytes.slice(at, at + READ_BUFFER);
          this.event(SOCKET_READABLE, this.incoming.length);
          // What the callback left unread is gone, as on lin.
          this.incoming = '';
        }
        if (outcome.closed) this.event(CLOSED);
      });
    }

    private event(message: number, value?: number): void {
      if (!this.closed) this.callback(message, value);
    }
  };
}

/** The length of the first whole request in `text` (head and Content-Length body), or null. */
function requestEnd(text: string): number | null {
  const head = text.indexOf('\r\n\r\n');
  if (head < 0) return null;
  const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, head));
  const end = head + 4 + (length === null ? 0 : Number(length[1]));
  return text.length >= end ? end : null;
}
