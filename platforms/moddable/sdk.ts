// The parts of the Moddable SDK the adapter uses, declared as the SDK's sources define them. The adapter
// takes these modules as values (`modules.ts` hands it the real ones; tests hand it stand-ins), which
// keeps every other file free of SDK imports: they type-check beside Node, whose ambient "http" module
// would shadow the SDK's. `tsconfig.json` here checks that the SDK's published typings
// (@moddable/typings) fit these declarations. Where those typings differ from the SDK's sources, the
// sources win: a Request reports an error as -2 (modules/network/http/http.js), the typings say -1.

/** Request callback messages (modules/network/http/http.js); any negative message is an error. */
export const REQUEST_FRAGMENT = 0;
export const STATUS = 1;
export const HEADER = 2;
export const RESPONSE_COMPLETE = 5;

/** The dictionary of the classic `Request` (documentation/network/network.md), as the adapter fills it. */
export interface RequestOptions {
  host: string;
  port: number;
  path: string;
  method: string;
  /** Flat name/value pairs. */
  headers: string[];
  /** `true`: the body is asked for in fragments through callback message 0 (and Content-Length is ours). */
  body: true;
  response: typeof ArrayBuffer;
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
   * its value. 5: `value` is the whole answer. Negative: the exchange failed and the request is closed.
   */
  callback(message: number, value?: unknown, etc?: unknown): unknown;
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

/** An open file of the `file` module (documentation/files/files.md). */
export interface FileHandle {
  read(type: typeof ArrayBuffer, count?: number): ArrayBuffer;
  write(...items: ArrayBuffer[]): void;
  close(): void;
  readonly length: number;
  position: number;
}

export interface FileClass {
  /** Opens `path`; with `write`, creates it when missing (its content is kept). */
  new (path: string, write?: boolean): FileHandle;
  delete(path: string): boolean;
  exists(path: string): boolean;
  rename(from: string, to: string): boolean;
}

/** What `createModdableHost` needs of the SDK: HTTP, timers, the tick counter, the log and a UTF-8 decoder. */
export interface Sdk {
  Request: RequestClass;
  /** `SecureSocket`, for https URLs; without it they fail before anything is sent. */
  SecureSocket?: unknown;
  Timer: TimerModule;
  Time: TimeModule;
  /** The global `trace`: one line to the debugger or the serial console. */
  trace(text: string): void;
  /** UTF-8 bytes as text: XS's native `String.fromArrayBuffer`. */
  decode(bytes: ArrayBuffer): string;
}
