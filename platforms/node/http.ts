// Host['request'] over undici's `request` (the HTTP client under Node's fetch, a dependency of this
// package). Connections are reused through the dispatcher's keep-alive pool; TLS certificates are always
// verified. Every failure becomes an HttpResult: it never rejects.
// An answer is read as a stream, at most `maxResponseBytes` of it, whatever its Content-Length says, and
// the rest is dropped with its connection, so a peer cannot make the process hold megabytes. A longer 2xx
// answer is garbled; a failure's status is that failure whatever the length of its body (a proxy's 5 MB
// error page), which is read as far as the bound for its message.
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';
import { rootCertificates } from 'node:tls';
import type { Dispatcher as UndiciDispatcher } from 'undici';

import { redact } from '../../src/core/errors';
import type { HttpRequest, HttpResult } from '../../src/core/host';
import { tlsFailureInWords } from './tls-words';

/** An undici dispatcher, such as `new Agent(...)` from the `undici` package. */
export type Dispatcher = UndiciDispatcher;

export interface HttpOptions {
  /**
   * Where requests go through. Default: undici's global dispatcher (Node's fetch uses the same), a
   * keep-alive pool per origin shared by every agent of the process. Give an undici Agent to trust an extra CA or to change pool settings.
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

// Failures of connecting (name lookup, routing, refusal) happen before a byte of the request is written.
const CONNECT_FAILURES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'ENETDOWN',
  'EHOSTDOWN',
  'EADDRNOTAVAIL',
]);
// Certificates are checked during the TLS handshake, also before the request is written.
const CERTIFICATE_FAILURE = /CERT|^UNABLE_TO_|^INVALID_CA$|^PATH_LENGTH_EXCEEDED$|^HOSTNAME_MISMATCH$/;
// A bad URL or header value is refused by undici before a connection is chosen.
const REFUSED_BEFORE_SENDING = new Set(['ERR_INVALID_URL', 'UND_ERR_INVALID_ARG']);
// undici's own timers: for the connection (then nothing was sent) and for the answer.
const CONNECT_TIMEOUT = 'UND_ERR_CONNECT_TIMEOUT';
const ANSWER_TIMEOUTS = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

export function createHttp(options: HttpOptions = {}): (req: HttpRequest) => Promise<HttpResult> {
  const { request, getGlobalDispatcher } = undici();
  const dispatcher = dispatcherFor(options) ?? getGlobalDispatcher();
  return async (req) => {
    const controller = new AbortController();
    // A fresh object per request, so an abort is known to be this timer's and no other.
    const timedOut = new Error('timeout');
    const timer = setTimeout(() => controller.abort(timedOut), req.timeoutMs);
    timer.unref();
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
      const answer = await request(req.url, { method: req.method as UndiciDispatcher.HttpMethod, headers: req.headers, body, dispatcher, signal: controller.signal });
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
      if (e === timedOut || controller.signal.reason === timedOut) return { kind: 'timeout', maybeDelivered: true };
      return failure(e, req.headers);
    } finally {
      clearTimeout(timer);
    }
  };
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

function failure(e: unknown, headers: Record<string, string>): HttpResult {
  const code = errorCode(e);
  if (code === CONNECT_TIMEOUT) return { kind: 'timeout', maybeDelivered: false };
  if (code !== null && ANSWER_TIMEOUTS.has(code)) return { kind: 'timeout', maybeDelivered: true };
  const notSent = code !== null && (CONNECT_FAILURES.has(code) || CERTIFICATE_FAILURE.test(code) || REFUSED_BEFORE_SENDING.has(code));
  // Anything else (a reset, a close, a broken answer) may come after the server acted, for a GET as for a
  // POST: a GET with the token updates presence, so the core is told the truth and decides.
  return { kind: 'network', message: withoutCredential(describe(e), headers), maybeDelivered: !notSent };
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

function dispatcherFor(options: HttpOptions): Dispatcher | undefined {
  if (options.caFile === undefined && options.connections === undefined) return options.dispatcher;
  if (options.dispatcher !== undefined) throw new TypeError('give caFile and connections, or a dispatcher, not both');
  // `ca` replaces the trusted set: keep the system's roots and add the file's.
  const connect = options.caFile === undefined ? undefined : { ca: [...rootCertificates, readFileSync(options.caFile, 'utf8')] };
  const { Agent } = undici();
  return new Agent({ connect, connections: options.connections });
}
