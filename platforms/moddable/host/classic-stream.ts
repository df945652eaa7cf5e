// The socket the ECMA-419 HTTP client (httpclient.js) talks through, made of the SDK's classic `Socket`
// or `SecureSocket`. Why not the ECMA-419 TCP and TLS sockets: `embedded:io/socket/tcp/tls`
// (examples/io/tcp/tlssocket) imports "ssl/session" as session_419.js, and SecureSocket, which the classic
// host needs, imports the same name as session_original.js; one app can map a name to one file only. Over
// SecureSocket both hosts share one TLS stack in flash, and the classic socket resolves names itself.
//
// It follows the ECMA-419 socket protocol as httpclient.js uses it: onWritable(room) once connected and
// whenever room comes back, onReadable(count) for bytes to read, onError() once when the connection
// fails or closes; read() one byte in "number" format, read(count) bytes in "buffer" format; write(data)
// answers the room left. And it tells its `link` two things the client keeps to itself: every byte the
// socket took (so that a request counts as written only once its last byte was taken), and why the
// connection ended. Every callback into the client is guarded: a throw that escaped into the classic
// socket's native callback would abort the app (fxAbort); here it ends the connection instead.
//
// The classic socket drops what its readable callback left unread, and httpclient.js leaves bytes unread
// on purpose: at the end of each chunk of a chunked answer it stops and reads on from a Timer. So what
// the client left is copied out of the socket before its callback returns (at most what one callback
// announced: 1 KB on lin and from SecureSocket) and read from there first. Bytes that nobody reads,
// after the client's own Timer had its turn, arrived with no request to read them: the connection ends.
import { errorText } from '../../../src/core/wire/errors';
import type { ClassicSocket, ClassicSocketClass, TimerModule } from './sdk';
import { SOCKET_CONNECTED, SOCKET_READABLE, SOCKET_WRITABLE } from './sdk';

/** The side of the keep-alive host that hears what the socket saw. */
export interface StreamLink {
  /** The socket took `bytes` more of the request. */
  taken(bytes: number): void;
  /** Why the connection is ending; the client's onError follows. */
  ended(reason: string): void;
}

/** What httpclient.js passes to `new socket.io(...)`: our `socket` dictionary, spread, and its own. */
export interface ClassicStreamOptions {
  Socket: ClassicSocketClass;
  /** For the look, after the client's own Timer, at bytes it left unread. */
  Timer: TimerModule;
  secure?: Record<string, unknown>;
  link: StreamLink;
  host: string;
  port: number;
  onReadable(count: number): void;
  onWritable(count: number): void;
  onError(): void;
}

/** How long bytes left unread may wait for the client's Timer to read them. */
const LOOK_AFTER_MS = 50;

export class ClassicStream {
  #socket: ClassicSocket | null;
  #options: ClassicStreamOptions;
  #number = false;
  #readable = 0;
  #ended = false;
  /** Bytes the client left unread in a socket callback, from `#at` on; and how many it read from them so far. */
  #held: Uint8Array | null = null;
  #at = 0;
  #heldRead = 0;
  #looking = false;
  /**
   * A socket closed, held until the next turn. close() unroots its object, and the SDK's lin socket
   * (modSocket.c) goes on with its native record after the callback that closed it returns: a collection
   * in that callback would free the record first (a segmentation fault, every time an outage cut a
   * kept-open connection in the fixed heaps of the ESP32 budget).
   */
  #closing: ClassicSocket | null = null;

  constructor(options: ClassicStreamOptions) {
    this.#options = options;
    const socket = new options.Socket({ host: options.host, port: options.port, secure: options.secure });
    socket.callback = (message, value) => this.#event(message, value ?? 0);
    this.#socket = socket;
  }

  get format(): 'number' | 'buffer' {
    return this.#number ? 'number' : 'buffer';
  }

  set format(format: 'number' | 'buffer') {
    this.#number = format === 'number';
  }

  read(count?: number): number | ArrayBuffer {
    const held = this.#held;
    if (held !== null) return this.#readHeld(held, this.#number ? 1 : (count as number));
    const socket = this.#socket as ClassicSocket;
    if (this.#number) {
      this.#readable--;
      return socket.read(Number);
    }
    this.#readable -= count as number;
    return socket.read(ArrayBuffer, count as number);
  }

  #readHeld(held: Uint8Array, count: number): number | ArrayBuffer {
    const from = this.#at;
    const end = Math.min(held.length, from + count);
    this.#at = end;
    this.#readable -= end - from;
    this.#heldRead += end - from;
    if (end === held.length) this.#held = null;
    return this.#number ? held[from] : (held.buffer as ArrayBuffer).slice(held.byteOffset + from, held.byteOffset + end);
  }

  /** Answers the room left, or 0 when the socket took nothing: the connection then ends. */
  write(data: ArrayBuffer | Uint8Array): number {
    const socket = this.#socket;
    if (socket === null || this.#ended) return 0;
    try {
      socket.write(data);
    } catch (e) {
      // Reported after this call: the client is in the middle of its own bookkeeping.
      void Promise.resolve(errorText(e)).then((reason) => this.#end(reason));
      return 0;
    }
    this.#options.link.taken(data.byteLength);
    return socket.write();
  }

  close(): void {
    const socket = this.#socket;
    this.#socket = null;
    this.#ended = true;
    this.#held = null;
    if (socket === null) return;
    this.#closing = socket;
    this.#options.Timer.set(() => {
      if (this.#closing === socket) this.#closing = null;
    }, 0);
    try {
      socket.close();
    } catch {
      // SecureSocket closes itself after it reported an error; a second close has nothing to release.
    }
  }

  #event(message: number, value: number): void {
    if (this.#ended) return;
    const options = this.#options;
    try {
      if (message === SOCKET_CONNECTED) options.onWritable((this.#socket as ClassicSocket).write());
      else if (message === SOCKET_WRITABLE) options.onWritable(value);
      else if (message === SOCKET_READABLE) this.#arrived(value);
      else this.#end(message === -1 ? 'connection closed by the server' : 'connection failed or closed');
    } catch (e) {
      this.#end(errorText(e));
    }
  }

  /** `count` bytes to read in this callback: after those the client left unread, if any. */
  #arrived(count: number): void {
    const socket = this.#socket as ClassicSocket;
    const held = this.#held;
    if (held !== null) {
      const joined = new Uint8Array(held.length - this.#at + count);
      joined.set(held.subarray(this.#at));
      joined.set(new Uint8Array(socket.read(ArrayBuffer, count)), held.length - this.#at);
      this.#held = joined;
      this.#at = 0;
      count = joined.length;
    }
    this.#readable = count;
    this.#options.onReadable(count);
    if (this.#ended) return;
    if (this.#held === null && this.#readable > 0) {
      this.#held = new Uint8Array(socket.read(ArrayBuffer, this.#readable));
      this.#at = 0;
    }
    if (this.#held !== null) this.#look();
  }

  /** Looks, once the client's own Timer (a 0 ms one) had its turn, whether anyone reads the held bytes. */
  #look(): void {
    if (this.#looking) return;
    this.#looking = true;
    const before = this.#heldRead;
    this.#options.Timer.set(() => {
      this.#looking = false;
      if (this.#ended || this.#held === null) return;
      if (this.#heldRead === before) this.#end(this.#held.length - this.#at + ' bytes arrived that no request was reading');
      else this.#look();
    }, LOOK_AFTER_MS);
  }

  #end(reason: string): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#options.link.ended(reason);
    try {
      this.#options.onError();
    } catch {
      // Nothing may escape into the socket's native callback; the client has told its requests already.
    }
    this.close();
  }
}
