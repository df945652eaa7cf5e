// Host['request'] over undici's `request` (the HTTP client under Node's fetch, a dependency of this
// package). Connections are reused through the dispatcher's keep-alive pool; TLS certificates are always
// verified. Every failure becomes an HttpResult: it never rejects.
// Every request settles by its deadline, `timeoutMs` plus SETTLE_MARGIN_MS, whatever undici does: at
// `timeoutMs` it is aborted (undici then destroys the connection it was written on), and if undici has not
// settled it a moment later, it is settled without undici. undici 7 ignores an abort until a connection is
// open: a TLS handshake that stalls holds its request until undici's own connect timeout (10 s by default,
// never with `connect.timeout` 0), and a connection still being made then is undici's to end, not ours.
// An answer is read as a stream, at most `maxResponseBytes` of it, whatever its Content-Length says, and
// the rest is dropped with its connection, so a peer cannot make the process hold megabytes. A longer 2xx
// answer is garbled; a failure's status is that failure whatever the length of its body (a proxy's 5 MB
// error page), which is read as far as the bound for its message.
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';
import { rootCertificates } from 'node:tls';
import type { Dispatcher as UndiciDispatcher } from 'undici';

import { redact } from '../../../src/core/wire/errors';
import type { HttpRequest, HttpResult } from '../../../src/core/host/host';
import { tlsFailureInWords } from './tls-words';
import { WriteWatch } from './write-watch';

/** An undici dispatcher, such as `new Agent(...)` from the `undici` package. */
export type Dispatcher = UndiciDispatcher;

export interface HttpOptions {
  /**
   * Where requests go through. Default: one undici Agent of this module's, a keep-alive pool per origin
   * shared by every host of the process that gives none. Give an undici Agent to trust an extra CA or to change pool settings.
   */
  dispatcher?: Dispatcher;
  /**
   * A PEM file of CA certificates to trust besides the system's (a private CA, a test server's own).
   * Read once, when the host is created. Not together with `dispatcher`.
   */
  caFile?: string;
  /**
   * The most connections open to one origin at once; further requests wait for one. Default: no limit.
   * Many agents sharing one request function (a gateway, a simulated fleet) keep the sockets on both
   * sides few this way: unbounded, a thousand devices flushing together open a thousand connections,
   * past what a service accepts (docs/gateway.md). Not together with `dispatcher`.
   */
  connections?: number;
}

/** How long after its `timeoutMs` a request that undici has not settled is settled without it. */
export const SETTLE_MARGIN_MS = 250;

// undici's own timers: for the connection and for the answer.
const TIMEOUTS = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

export function createHttp(options: HttpOptions = {}): (req: HttpRequest) => Promise<HttpResult> {
  const { request } = undici();
  const watch = new WriteWatch(dispatcherFor(options) ?? sharedAgent());
  const dispatcher = watch.dispatcher;

  /** One exchange through undici, with its abort `signal`; `timedOut` is the reason the deadline aborts with. */
  async function exchange(req: HttpRequest, signal: AbortSignal, timedOut: Error): Promise<HttpResult> {
    try {
      // undici's request rather than fetch: the same pool and parser without the WHATWG objects (Request,
      // Headers, streams) that fetch builds around each request, which a gateway's hundreds of requests a
      // second turn into young-generation garbage (docs/gateway.md, "Where a device's memory goes"). It
      // follows no redirect: the core follows a 307 or 308 to the same origin itself (client.ts).
      // The body as bytes of its own: undici copies a string body into a Buffer from Node's shared 8 KB
      // pool, where a copy that outlives a young-generation collection keeps its whole slab, with every
      // record line cut from it, until a full one. At 10,000 gateway devices that left about 45 MB of holes
      // in the C heap (docs/gateway.md, "A device at 10,000").
      const body = req.body === undefined ? undefined : utf8Out.encode(req.body);
      const answer = await request(req.url, { method: req.method as UndiciDispatcher.HttpMethod, headers: req.headers, body, dispatcher, signal });
      const status = answer.statusCode;
      const text = await readAtMost(answer, req.maxResponseBytes, status < 200 || status > 299);
      if (text === null) {
        // Dropped with its connection: the rest of the answer is never read. The abort this raises on the
        // stream is ours, not an error.
        answer.body.on('error', () => {}).destroy();
        return { kind: 'network', message: 'the answer is longer than ' + req.maxResponseBytes + ' bytes', maybeDelivered: true };
      }
      const headers = answer.headers;
      return { kind: 'response', status, retryAfter: header(headers, 'retry-after'), date: header(headers, 'date'), location: header(headers, 'location'), body: text };
    } catch (e) {
      const began = watch.began(signal);
      if (e === timedOut || signal.reason === timedOut) return { kind: 'timeout', maybeDelivered: began };
      return failure(e, req.headers, began);
    }
  }

  return (req) =>
    new Promise((resolve) => {
      const controller = new AbortController();
      // A fresh object per request, so an abort is known to be this deadline's and no other.
      const timedOut = new Error('timeout');
      let late: ReturnType<typeof setTimeout> | undefined;
      const timer = setTimeout(() => {
        controller.abort(timedOut);
        late = setTimeout(() => resolve({ kind: 'timeout', maybeDelivered: watch.began(controller.signal) }), SETTLE_MARGIN_MS);
        late.unref();
      }, req.timeoutMs);
      timer.unref();
      void exchange(req, controller.signal, timedOut).then((result) => {
        clearTimeout(timer);
        clearTimeout(late);
        resolve(result);
      });
    });
}

/** A header of the answer; undici gives a repeated one as an array, of which the first counts. */
function header(headers: IncomingHttpHeaders, name: string): string | null {
  const value = headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

/** Decodes whole answers (never a stream of parts), so one serves every request. */
const utf8 = new TextDecoder();
/** Encodes request bodies. */
const utf8Out = new TextEncoder();

/**
 * The answer's body as UTF-8 text, or null once it holds more than `max` bytes; `prefix`: its first `max`
 * bytes then, and the rest is dropped with the connection (leaving the loop destroys the stream). A
 * Content-Length above `max` ends it before a byte is read; a lower one is not trusted either: the bytes
 * are counted.
 */
async function readAtMost(answer: UndiciDispatcher.ResponseData, max: number, prefix: boolean): Promise<string | null> {
  const length = header(answer.headers, 'content-length');
  if (length !== null && Number(length) > max && !prefix) return null;
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of answer.body as AsyncIterable<Buffer>) {
    if (total + chunk.byteLength > max) {
      if (!prefix) return null;
      chunks.push(chunk.subarray(0, max - total));
      total = max;
      break;
    }
    total += chunk.byteLength;
    chunks.push(chunk);
  }
  // As fetch's response.text() decodes: UTF-8, a leading BOM dropped, bad bytes replaced. An answer in one
  // chunk, the usual case, is decoded where it is, not copied first.
  return utf8.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total));
}

/**
 * The result of undici's error `e`; `began`: whether undici began to write the request. Once it did, a
 * reset, a close or a broken answer may come after the server acted, for a GET as for a POST (a GET with
 * the token updates presence), so the core is told the truth and decides.
 */
function failure(e: unknown, headers: Record<string, string>, began: boolean): HttpResult {
  const code = errorCode(e);
  if (code !== null && TIMEOUTS.has(code)) return { kind: 'timeout', maybeDelivered: began };
  return { kind: 'network', message: withoutCredential(describe(e), headers), maybeDelivered: began };
}

/** The first error code along the cause chain: an error may carry the socket's as its `cause`. */
function errorCode(e: unknown): string | null {
  let cur: unknown = e;
  for (let depth = 0; depth < 4 && typeof cur === 'object' && cur !== null; depth++) {
    const { code, errors, cause } = cur as { code?: unknown; errors?: unknown; cause?: unknown };
    if (typeof code === 'string') return code;
    // Connecting to every address of a name fails as an AggregateError of one error per address.
    cur = Array.isArray(errors) && errors.length > 0 ? errors[0] : cause;
  }
  return null;
}

function describe(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  // OpenSSL's own text ("ssl3_get_record:wrong version number") is left out for the words.
  const tls = tlsFailureInWords(errorCode(e));
  if (tls !== null) return tls;
  return e.cause instanceof Error ? e.message + ': ' + e.cause.message : e.message;
}

/**
 * A message without the Authorization header's credential, as the core takes a token out (its `redact`,
 * which also takes out any `Bearer …`). undici's `request` names a header it rejects without its value
 * (fetch quoted it); this keeps any message that would quote it from carrying the token.
 */
function withoutCredential(message: string, headers: Record<string, string>): string {
  let out = message;
  for (const name of Object.keys(headers)) {
    if (name.toLowerCase() !== 'authorization') continue;
    const value = headers[name];
    out = redact(out, value.slice(value.indexOf(' ') + 1));
  }
  return out;
}

/** The undici package (a dependency): loaded by the first host, as the only way this host speaks HTTP. */
function undici(): typeof import('undici') {
  return createRequire(import.meta.url)('undici') as typeof import('undici');
}

let shared: Dispatcher | null = null;

/**
 * The pool of every host that gives no dispatcher. Not undici's global dispatcher: on Node 20, a fetch()
 * made before (by the application, a library) installs Node's own undici 6 there, which refuses the
 * handlers of undici 7's requests ("invalid onError method").
 */
function sharedAgent(): Dispatcher {
  if (shared === null) shared = new (undici().Agent)();
  return shared;
}

function dispatcherFor(options: HttpOptions): Dispatcher | undefined {
  if (options.caFile === undefined && options.connections === undefined) return options.dispatcher;
  if (options.dispatcher !== undefined) throw new TypeError('give caFile and connections, or a dispatcher, not both');
  // `ca` replaces the trusted set: keep the system's roots and add the file's.
  const connect = options.caFile === undefined ? undefined : { ca: [...rootCertificates, readFileSync(options.caFile, 'utf8')] };
  const { Agent } = undici();
  return new Agent({ connect, connections: options.connections });
}
