// The typed client for the service's six operations (docs/interface.md §4 and its decisions). It builds
// the URL and headers, hands the exchange to the host, and checks every answer on the way in: its shape
// against the interface's tables and its records against the request (ids, order, count). Every failure
// of the exchange or the answer rejects with a FeedError; a programming error (a bad id, a write without
// a token) rejects with a plain TypeError, RangeError or Error before anything is sent.
//
// Stack depth is a budget on the device: XS spends about 27 stack slots on each pending async call
// (measured on a lin build; an ESP32 build's stack is 384 slots). So each public call but one starts its
// work in a promise job (`later`), on a fresh stack, and reaches the host through at most two async
// steps. The one is createFeedsEncoded, once per batch on the uplink's path: the uplink resumes on a
// fresh stack itself, and a promise job there costs XS compute per sample (docs/xs.md).
import type { Host, HttpRequest, HttpResult } from '../host/host';
import type { CreatedFeed, Feed, FeedInput, InputValue, Resource } from './wire';
import { LIMITS } from './wire';
import type { BatchAnswer, Table } from './answers';
import { batchAnswer, clip, CREATED, failureDetail, feedOrNullIssue, isRecord, isValue, listIssue, mismatch, parseOwnBody, readBound, recordIssue, RESOURCE, typeName, writeBound } from './answers';
import { FeedError, elementIndexOf, redact } from './errors';
import { parseRetryAfter } from './retry-after';
import { MAX_REDIRECTS, sameOriginTarget } from './redirect';
import type { FeedErrorKind, FeedErrorDetails } from './errors';

export interface ClientOptions {
  /** e.g. `https://host` or `http://127.0.0.1:8080`; trailing slashes are ignored. */
  baseUrl: string;
  publicKey: string;
  token?: string;
  timeoutMs: number;
}

export interface CallOptions {
  silent?: boolean;
  /**
   * Send the bearer header (default: when a token is set). Reads only: operations 3 and 4 always send
   * it, so `auth: false` on them, or `auth: true` without a token, is a programming error.
   */
  auth?: boolean;
}

// Shared by every request: headers are never built per call. Frozen, so an adapter that would change
// them fails loudly instead of leaking a header into the next request.
const READ_HEADERS: Record<string, string> = Object.freeze({ Accept: 'application/json' });

export class FeedClient {
  /** HTTP requests handed to the host, of every kind (a redirect followed is one more). */
  requests = 0;
  private readonly send: Host['request'];
  private readonly baseUrl: string;
  /** `/api/device/<escaped key>`: the start of every path. */
  private readonly device: string;
  /** Operation 4's path, made once: it is on the uplink's path once a batch. */
  private readonly feeds: string;
  private readonly token: string | undefined;
  private readonly timeoutMs: number;
  /** Null without a token. */
  private readonly authHeaders: Record<string, string> | null = null;
  private readonly writeHeaders: Record<string, string> | null = null;

  /** `request` is called as a plain function: pass a bound one, e.g. `(r) => host.request(r)`. */
  constructor(request: Host['request'], options: ClientOptions) {
    this.send = request;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.device = '/api/device/' + encodeURIComponent(options.publicKey);
    this.feeds = this.device + '/resources/feeds';
    this.token = options.token;
    this.timeoutMs = options.timeoutMs;
    if (options.token) {
      const auth = { ...READ_HEADERS, Authorization: 'Bearer ' + options.token };
      this.authHeaders = Object.freeze(auth);
      this.writeHeaders = Object.freeze({ ...auth, 'Content-Type': 'application/json' });
    }
  }

  /** Operation 1. */
  getResource(id: number, o?: CallOptions): Promise<Resource> {
    return later(() => {
      checkId(id, 'resource id');
      return this.one<Resource>('GET', '/resource/' + id, undefined, this.readHeaders(o), o, RESOURCE, id);
    });
  }

  /** Operation 2: one resource per id, in order; over 100 ids go in several requests. */
  getResources(ids: readonly number[], o?: CallOptions): Promise<Resource[]> {
    return this.list<Resource>(ids, '', (v, id) => recordIssue(v, RESOURCE, id), o);
  }

  /** Operation 3. */
  createFeed(id: number, input: InputValue, o?: CallOptions): Promise<CreatedFeed> {
    return later(() => {
      checkId(id, 'resource id');
      checkInput(input, 'input');
      const headers = this.writeHeadersFor('createFeed', o);
      return this.one<CreatedFeed>('POST', '/resource/' + id + '/feeds', '{"input":' + JSON.stringify(input) + '}', headers, o, CREATED, id);
    });
  }

  /**
   * Operation 4, atomic on the service: a 4xx stores nothing and its `elementIndex` names the first bad
   * element. The batch is sent as one request whatever its size (splitting would break atomicity); an
   * empty batch sends nothing.
   */
  createFeeds(elements: readonly FeedInput[], o?: CallOptions): Promise<BatchAnswer> {
    return later(() => {
      const parts: string[] = [];
      for (let i = 0; i < elements.length; i++) {
        const { id_resource, input } = elements[i];
        checkId(id_resource, 'elements[' + i + '].id_resource');
        checkInput(input, 'elements[' + i + '].input');
        // Only the two documented fields, whatever else the caller's objects carry.
        parts.push(JSON.stringify({ id_resource, input }));
      }
      return this.batch('[' + parts.join(',') + ']', elements.length, (i) => elements[i].id_resource, elements, o);
    });
  }

  /**
   * Operation 4 with a body already encoded by the queue: `count` elements, the id_resource of element
   * i is `resourceAt(i)` (used to check the answer matches).
   */
  createFeedsEncoded(body: string, count: number, resourceAt: (i: number) => number, o?: CallOptions): Promise<BatchAnswer> {
    // The uplink's path, once a batch: no promise job here (XS compute per sample, docs/xs.md), only the
    // two async steps of every request, on the uplink's own fresh stack.
    if (!Number.isSafeInteger(count) || count < 0) return Promise.reject(new RangeError('count ' + count + ' is not a non-negative integer'));
    return this.batch(body, count, resourceAt, null, o);
  }

  /** Operation 5: null where a resource has no feed. */
  firstFeeds(ids: readonly number[], o?: CallOptions): Promise<(Feed | null)[]> {
    return this.list<Feed | null>(ids, '/feeds/first', feedOrNullIssue, o);
  }

  /** Operation 6: null where a resource has no feed. */
  lastFeeds(ids: readonly number[], o?: CallOptions): Promise<(Feed | null)[]> {
    return this.list<Feed | null>(ids, '/feeds/last', feedOrNullIssue, o);
  }

  /** Operations 1 and 3: one record of `table`, for resource `id`. */
  private one<T>(
    method: 'GET' | 'POST',
    resourcePath: string,
    body: string | undefined,
    headers: Record<string, string>,
    o: CallOptions | undefined,
    table: Table,
    id: number,
  ): Promise<T> {
    const path = this.device + resourcePath + query(o);
    const bound = body === undefined ? readBound(1) : writeBound(body, 1);
    return this.exchange(method, path, body, headers, 0, bound).then((payload) => {
      const issue = recordIssue(payload, table, id);
      if (issue !== null) throw this.malformed(method + ' ' + path, 'payload' + issue);
      return payload as T;
    });
  }

  /** Operations 2, 5, 6: at most LIMITS.maxIdsInPath ids per request, answers concatenated in order. */
  private list<T>(
    ids: readonly number[],
    suffix: string,
    recordIssue: (v: unknown, id: number) => string | null,
    o: CallOptions | undefined,
  ): Promise<T[]> {
    return later(() => {
      for (let i = 0; i < ids.length; i++) checkId(ids[i], 'ids[' + i + ']');
      const headers = this.readHeaders(o);
      const from = (start: number, all: T[]): Promise<T[]> | T[] => {
        if (start >= ids.length) return all;
        const part = ids.slice(start, start + LIMITS.maxIdsInPath);
        const path = this.device + '/resources/' + part.join(',') + suffix + query(o);
        return this.exchange('GET', path, undefined, headers, 0, readBound(part.length)).then((payload) => {
          const issue = listIssue(payload, part.length, (i) => recordIssue((payload as unknown[])[i], part[i]), 'records');
          if (issue !== null) throw this.malformed('GET ' + path, 'payload' + issue);
          return from(start + LIMITS.maxIdsInPath, all.concat(payload as T[]));
        });
      };
      return from(0, []);
    });
  }

  private async batch(
    body: string,
    count: number,
    resourceAt: (i: number) => number,
    elements: readonly FeedInput[] | null,
    o: CallOptions | undefined,
  ): Promise<BatchAnswer> {
    const headers = this.writeHeadersFor('createFeeds', o);
    if (count === 0) return { rejected: [], feeds: [], partial: false };
    const path = this.feeds + query(o);
    const payload = await this.exchange('POST', path, body, headers, count, writeBound(body, count));
    // The {success, failed} form is matched to elements by their inputs too: an encoded body is parsed
    // back for that, only on this rare path.
    const known = elements ?? (Array.isArray(payload) ? null : parseOwnBody(body, count));
    const answer = batchAnswer(payload, count, resourceAt, known);
    if (typeof answer === 'string') throw this.malformed('POST ' + path, 'payload' + answer);
    for (const r of answer.rejected) r.reason = redact(r.reason, this.token);
    return answer;
  }

  /**
   * One exchange: the payload of a 200 answer whose envelope is well formed, else a FeedError.
   * `batchCount` is the element count of an operation-4 body (0 otherwise), to bound `elementIndex`;
   * `maxBytes` bounds the answer. A 307 or 308 to the same origin is followed here, with the same
   * method, body and headers (the token too: the origin is the one it was given for), at most
   * MAX_REDIRECTS times; any other redirect is an error that names its Location.
   */
  private async exchange(
    method: 'GET' | 'POST',
    path: string,
    body: string | undefined,
    headers: Record<string, string>,
    batchCount: number,
    maxBytes: number,
  ): Promise<unknown> {
    let request: HttpRequest = { method, url: this.baseUrl + path, headers, timeoutMs: this.timeoutMs, maxResponseBytes: maxBytes };
    if (body !== undefined) request.body = body;
    let result: HttpResult;
    let hops = 0;
    for (; ; hops++) {
      this.requests++;
      try {
        result = await this.send(request);
      } catch (e) {
        result = broken(e);
      }
      if (result.kind !== 'response' || (result.status !== 307 && result.status !== 308) || hops === MAX_REDIRECTS) break;
      const target = result.location ? sameOriginTarget(request.url, result.location) : null;
      if (target === null) break;
      // A new request: the host may still hold the one it was given.
      request = { ...request, url: target };
    }
    return this.payload(result, method, path, batchCount, hops);
  }

  /** The payload of a 200 answer whose envelope is well formed; a FeedError for anything else. */
  private payload(result: HttpResult, method: string, path: string, batchCount: number, hops: number): unknown {
    // Named in messages only, so only made for one.
    const where = (): string => method + ' ' + path;
    if (result.kind === 'timeout') {
      throw this.fail('timeout', 'timeout after ' + this.timeoutMs + ' ms on ' + where(), { maybeDelivered: result.maybeDelivered });
    }
    if (result.kind === 'network') {
      throw this.fail('network', 'network error on ' + where() + ': ' + result.message, { maybeDelivered: result.maybeDelivered });
    }
    const status = result.status;
    if (status >= 300 && status <= 399) {
      const location = redact(result.location ?? '', this.token);
      const why = location === '' ? 'without a Location' : status !== 307 && status !== 308 ? 'not followed, it may turn the request into a GET'
        : hops === MAX_REDIRECTS ? 'not followed, after ' + hops + ' redirects' : 'not followed, another origin';
      throw this.fail('http', 'HTTP ' + status + ' on ' + where() + ': redirected to ' + (location || '?') + ' (' + why + ')', { status, location });
    }
    if (status < 200 || status > 299) {
      const detail = failureDetail(result.body);
      const index = batchCount > 0 && status >= 400 && status < 500 ? elementIndexOf(detail) : -1;
      throw this.fail('http', 'HTTP ' + status + ' on ' + where() + ': ' + detail, {
        status,
        retryAfterMs: parseRetryAfter(result.retryAfter, result.date ?? null),
        elementIndex: index < batchCount ? index : -1,
      });
    }
    // The contract answers success with 200 only; another 2xx still means the service took the request.
    if (status !== 200) throw this.malformed(where(), 'unexpected HTTP ' + status, status);
    let envelope: unknown;
    try {
      envelope = JSON.parse(result.body);
    } catch {
      throw this.malformed(where(), 'body is not JSON');
    }
    if (!isRecord(envelope)) throw this.malformed(where(), 'body' + mismatch('object', envelope));
    const { success, message, payload } = envelope;
    if (success !== true) {
      const issue = success !== false ? mismatch('boolean', success)
        : ': false with HTTP 200' + (typeof message === 'string' ? ': ' + clip(message) : '');
      throw this.malformed(where(), 'success' + issue);
    }
    if (typeof message !== 'string') throw this.malformed(where(), 'message' + mismatch('string', message));
    if (payload === undefined) throw this.malformed(where(), 'payload: missing');
    return payload;
  }

  /** A 2xx answer that is not what the request asked for: the service may have acted on it. */
  private malformed(where: string, issue: string, status = 200): FeedError {
    return this.fail('protocol', 'malformed answer to ' + where + ': ' + issue, { status, maybeDelivered: true });
  }

  /** Every FeedError of the client is made here, so no message can carry the token. */
  private fail(kind: FeedErrorKind, message: string, details: FeedErrorDetails): FeedError {
    return new FeedError(kind, redact(message, this.token), details);
  }

  private readHeaders(o: CallOptions | undefined): Record<string, string> {
    const auth = o?.auth;
    if (auth === true && this.authHeaders === null) throw new Error('auth: true needs a token in the client options');
    return auth !== false && this.authHeaders !== null ? this.authHeaders : READ_HEADERS;
  }

  private writeHeadersFor(method: string, o: CallOptions | undefined): Record<string, string> {
    if (this.writeHeaders === null) throw new Error(method + ' needs a token: feed creation requires the Authorization header');
    if (o?.auth === false) throw new Error(method + ' cannot send without the Authorization header (auth: false)');
    return this.writeHeaders;
  }
}

/** Runs `work` in a promise job: on a fresh stack, and a throw becomes a rejection. */
function later<T>(work: () => T | Promise<T>): Promise<T> {
  return Promise.resolve().then(work);
}

/**
 * The host contract says an adapter never rejects nor throws; if one does, it is still a failed exchange
 * that may have reached the service, not a crash of the caller.
 */
function broken(e: unknown): HttpResult {
  return { kind: 'network', message: String(e), maybeDelivered: true };
}

function query(o: CallOptions | undefined): string {
  return o?.silent === true ? '?silent=true' : '';
}

function checkId(id: unknown, what: string): void {
  if (typeof id !== 'number') throw new TypeError(what + ' ' + String(id) + ' is not a number');
  if (!Number.isSafeInteger(id) || id <= 0) throw new RangeError(what + ' ' + id + ' is not a positive safe integer');
}

function checkInput(input: unknown, what: string): void {
  if (typeof input === 'number' ? !isFinite(input) : !isValue(input)) {
    throw new TypeError(what + ' must be a finite number, a boolean or a string, not ' + typeName(input));
  }
}
