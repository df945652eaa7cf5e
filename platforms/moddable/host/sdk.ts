// The parts of the Moddable SDK the host uses, declared as the SDK's sources define them (the flash queue's
// `file` module: ../storage/file-module.ts). The adapter takes these modules as values (`../modules.ts`
// hands it the real ones; tests hand it stand-ins), which keeps every other file free of SDK imports: they
// type-check beside Node, whose ambient "http" module would shadow the SDK's. `../tsconfig.json` checks
// that the SDK's published typings (@moddable/typings) fit these declarations. Where those typings differ
// from the SDK's sources, the sources win: a Request reports an error as -2 (modules/network/http/http.js),
// the typings say -1.

/** Request callback messages (modules/network/http/http.js); any negative message is an error. */
export const REQUEST_FRAGMENT = 0;
export const STATUS = 1;
export const HEADER = 2;
export const RESPONSE_FRAGMENT = 4;
export const RESPONSE_COMPLETE = 5;

/** The dictionary of the classic `Request` (documentation/network/network.md), as the adapter fills it. */
export interface RequestOptions {
  host: string;
  port: number;
  path: string;
  method: string;
  /** Flat name/value pairs. */
  headers: string[];
  /** `true`: the body is asked for in fragments through callback message 0 (and Content-Length is ours); absent: none (a GET). */
  body?: true;
  /** `SecureSocket` for https. */
  Socket?: unknown;
  /** SecureSocket's TLS options: `protocolVersion`, and the CA `certificate` when not from resources. */
  secure?: Record<string, unknown>;
}

/** The transport a Request reads and writes through; http.js calls its `callback` for every socket event. */
interface RequestSocket {
  callback(message: number, value?: unknown): void;
}

export interface SdkRequest {
  /**
   * Message 0: `value` bytes may be written; answer a fragment of at most that many, or undefined when
   * the body is complete. 1: `value` is the status. 2: a header, `value` its lower-cased name and `etc`
   * its value. 4: `value` bytes of the answer arrived, to read now with `read` (no `response` was given).
   * 5: the answer is complete. Negative: the exchange failed and the request is closed.
   */
  callback(message: number, value?: unknown, etc?: unknown): unknown;
  /** Inside message 4: at most `count` of the bytes that arrived (no more than the chunk's, when chunked). */
  read(type: typeof ArrayBuffer, count: number): ArrayBuffer | undefined;
  close(): void;
  socket?: RequestSocket;
}

export interface RequestClass {
  new (options: RequestOptions): SdkRequest;
}

/** `timer` (documentation/base/base.md): ids are host objects; `clear` ignores a one-shot that fired. */
export interface TimerModule {
  set(callback: () => void, ms: number): unknown;
  clear(id: unknown): void;
}

/** `time`: `ticks` is a millisecond counter that rolls over on a microcontroller; `delta` is correct across it. */
export interface TimeModule {
  readonly ticks: number;
  delta(start: number, end?: number): number;
}

/** Classic socket callback messages (modules/network/socket/socket.js); negative: closed (-1) or failed (-2). */
export const SOCKET_CONNECTED = 1;
export const SOCKET_READABLE = 2;
export const SOCKET_WRITABLE = 3;

/**
 * The classic `Socket` ("socket") and `SecureSocket` ("securesocket"), as the keep-alive host uses them.
 * Bytes a `readable` message announces must be read inside that callback: both drop what is left.
 */
export interface ClassicSocket {
  /** Message 1: connected (after the handshake, for SecureSocket); 2: `value` bytes to read; 3: room to write. */
  callback(message: number, value?: number): void;
  /** One byte as a number. */
  read(type: typeof Number): number;
  read(type: typeof ArrayBuffer, count: number): ArrayBuffer;
  /** The bytes left to read in this callback. */
  read(): number;
  /** Throws when the socket cannot take all of it ("can't write all data", lin's "write failed"). */
  write(data: ArrayBuffer | Uint8Array): void;
  /** The room to write. */
  write(): number;
  close(): void;
}

export interface ClassicSocketClass {
  /** `host` is resolved by the socket itself; `secure` is SecureSocket's TLS dictionary. */
  new (options: { host: string; port: number; secure?: Record<string, unknown> }): ClassicSocket;
}

/** A request of the ECMA-419 HTTP client (examples/io/tcp/httpclient/httpclient.js); `this` in its callbacks. */
export interface ClientRequest {
  /** `count` bytes of the body, inside onReadable. */
  read(count: number): ArrayBuffer | undefined;
  /** Part of the body, at most the count onWritable gave; answers the room left (0 once the body is complete). */
  write(data: Uint8Array): number;
}

export interface ClientRequestOptions {
  method: string;
  path: string;
  headers: Map<string, string>;
  /** The response headers kept for onHeaders (names lower-cased); content-length is parsed either way. */
  headersMask: string[];
  onHeaders(status: number, headers: Map<string, string>): void;
  onReadable(count: number): void;
  /** Room for `count` more bytes of a body whose content-length was given. */
  onWritable(count: number): void;
  /** `null` once the whole answer was read; an empty Error when the connection failed or closed first. */
  onDone(error: Error | null): void;
}

export interface HttpClient {
  /** Queued behind the requests before it on the one connection. */
  request(options: ClientRequestOptions): ClientRequest;
  close(): void;
}

/** The options httpclient.js reads; `dns` and `socket` are spread into their `io` constructors. */
export interface HttpClientOptions {
  host: string;
  port: number;
  /** The connection failed or closed: every queued request was told (onDone), and the client closed itself. */
  onError(error?: unknown): void;
  dns: { io: new (options: object) => { resolve(options: { host: string; onResolved(host: string, address: string): void; onError(): void }): void } };
  socket: { io: new (options: never) => object; [key: string]: unknown };
}

export interface HttpClientClass {
  new (options: HttpClientOptions): HttpClient;
}

/** What `createModdableHost` needs of the SDK: HTTP, timers, the tick counter, the log and UTF-8 both ways. */
export interface Sdk {
  Request: RequestClass;
  /** The ECMA-419 HTTP client, for the keep-alive host (`http: 'keep-alive'`, the default). */
  HTTPClient: HttpClientClass;
  /** The classic `Socket`, under the keep-alive host's client for http URLs. */
  Socket: ClassicSocketClass;
  /** `SecureSocket`, for https URLs; without it they fail before anything is sent. */
  SecureSocket?: ClassicSocketClass;
  Timer: TimerModule;
  Time: TimeModule;
  /** The global `trace`: one line to the debugger or the serial console. */
  trace(text: string): void;
  /** The first `length` bytes of `bytes`, UTF-8, as text: XS's native `String.fromArrayBuffer(bytes, 0, length)`. */
  decode(bytes: ArrayBuffer, length: number): string;
  /** Text as UTF-8 bytes: XS's native `ArrayBuffer.fromString`. */
  encode(text: string): ArrayBuffer;
}
