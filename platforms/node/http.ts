// Host['request'] over Node's built-in fetch (undici). Connections are reused through the dispatcher's
// keep-alive pool; TLS certificates are always verified. Every failure becomes an HttpResult: it never rejects.
// An answer is read as a stream, at most `maxResponseBytes` of it, whatever its Content-Length says: a
// longer one is dropped with its connection, so a peer cannot make the process hold megabytes.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { rootCertificates } from 'node:tls';
import type { Dispatcher as UndiciDispatcher } from 'undici';

import type { HttpRequest, HttpResult } from '../../src/core/host';
import { tlsFailureInWords } from './tls-words';

/** An undici dispatcher, such as `new Agent(...)` from the `undici` package. */
export type Dispatcher = UndiciDispatcher;

export interface HttpOptions {
  /**
   * Where requests go through. Default: Node's global dispatcher, a keep-alive pool per origin shared by
   * every agent of the process. Give an undici Agent to trust an extra CA or to change pool settings.
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
// undici's own timers: for the connection (then nothing was sent) and for the answer.
const CONNECT_TIMEOUT = 'UND_ERR_CONNECT_TIMEOUT';
const ANSWER_TIMEOUTS = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

export function createHttp(options: HttpOptions = {}): (req: HttpRequest) => Promise<HttpResult> {
  const dispatcher = dispatcherFor(options);
  // Node's fetch takes undici's dispatcher; its RequestInit type names the copy in undici-types.
  const init = dispatcher === undefined ? undefined : ({ dispatcher } as RequestInit);
  return async (req) => {
    const controller = new AbortController();
    let request: Request;
    try {
      // A redirect is answered, not followed: the core follows a 307 or 308 to the same origin itself
      // (client.ts); fetch would turn a POST redirected by a 301, 302 or 303 into a GET.
      request = new Request(req.url, { method: req.method, headers: req.headers, body: req.body, redirect: 'manual', signal: controller.signal });
    } catch (e) {
      // A bad URL or header value: refused before anything was sent.
      return { kind: 'network', message: redact(describe(e), req.headers), maybeDelivered: false };
    }
    // A fresh object per request, so an abort is known to be this timer's and no other.
    const timedOut = new Error('timeout');
    const timer = setTimeout(() => controller.abort(timedOut), req.timeoutMs);
    timer.unref();
    try {
      const response = await fetch(request, init);
      const body = await readAtMost(response, req.maxResponseBytes);
      if (body === null) {
        controller.abort(tooLong);
        return { kind: 'network', message: 'the answer is longer than ' + req.maxResponseBytes + ' bytes', maybeDelivered: true };
      }
      const headers = response.headers;
      return { kind: 'response', status: response.status, retryAfter: headers.get('retry-after'), date: headers.get('date'), location: headers.get('location'), body };
    } catch (e) {
      if (e === timedOut || controller.signal.reason === timedOut) return { kind: 'timeout', maybeDelivered: true };
      return failure(e, req.headers);
    } finally {
      clearTimeout(timer);
    }
  };
}

/** Aborting a fetch with it drops the connection of an answer read no further. */
const tooLong = new Error('answer too long');

/**
 * The answer's body as UTF-8 text, or null once it holds more than `max` bytes. A Content-Length above
 * `max` ends it before a byte is read; a lower one is not trusted either: the bytes are counted.
 */
async function readAtMost(response: Response, max: number): Promise<string | null> {
  const length = response.headers.get('content-length');
  if (length !== null && Number(length) > max) return null;
  if (response.body === null) return '';
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) return null;
    chunks.push(value);
  }
  // As response.text() decodes: UTF-8, a leading BOM dropped, bad bytes replaced.
  return new TextDecoder().decode(Buffer.concat(chunks, total));
}

function failure(e: unknown, headers: Record<string, string>): HttpResult {
  const code = errorCode(e);
  if (code === CONNECT_TIMEOUT) return { kind: 'timeout', maybeDelivered: false };
  if (code !== null && ANSWER_TIMEOUTS.has(code)) return { kind: 'timeout', maybeDelivered: true };
  const notSent = (code !== null && (CONNECT_FAILURES.has(code) || CERTIFICATE_FAILURE.test(code))) || refusedByFetch(e);
  // Anything else (a reset, a close, a broken answer) may come after the server acted, for a GET as for a
  // POST: a GET with the token updates presence, so the core is told the truth and decides.
  return { kind: 'network', message: redact(describe(e), headers), maybeDelivered: !notSent };
}

/** fetch refuses some ports (the WHATWG "bad port" list, e.g. 1, 9, 25) before it opens a connection. */
function refusedByFetch(e: unknown): boolean {
  const cause = (e as { cause?: unknown } | null)?.cause;
  return cause instanceof Error && cause.message === 'bad port';
}

/** The first error code along the cause chain: fetch wraps the socket's error as `cause`. */
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
  const tls = tlsFailureInWords(errorCode(e));
  if (tls !== null) return e.message + ': ' + tls;
  return e.cause instanceof Error ? e.message + ': ' + e.cause.message : e.message;
}

/** Removes the Authorization value from a message: undici quotes a header value it rejects. */
function redact(message: string, headers: Record<string, string>): string {
  let out = message;
  for (const name of Object.keys(headers)) {
    if (name.toLowerCase() !== 'authorization') continue;
    const value = headers[name];
    const credential = value.slice(value.indexOf(' ') + 1);
    for (const secret of [value, credential]) if (secret !== '') out = out.split(secret).join('[redacted]');
  }
  return out;
}

function dispatcherFor(options: HttpOptions): Dispatcher | undefined {
  if (options.caFile === undefined && options.connections === undefined) return options.dispatcher;
  if (options.dispatcher !== undefined) throw new TypeError('give caFile and connections, or a dispatcher, not both');
  // `ca` replaces the trusted set: keep the system's roots and add the file's.
  const connect = options.caFile === undefined ? undefined : { ca: [...rootCertificates, readFileSync(options.caFile, 'utf8')] };
  // Loaded only here: most hosts never need undici's own Agent, and it is a large module.
  const { Agent } = createRequire(import.meta.url)('undici') as typeof import('undici');
  return new Agent({ connect, connections: options.connections });
}
