// The typed client for the service's six operations (service-interface.md §4, contract.md). It builds
// the URL and headers, hands the exchange to the host, and checks every answer on the way in: its shape
// against the interface's tables and its records against the request (ids, order, count). Every failure
// of the exchange or the answer rejects with a FeedError; a programming error (a bad id, a write without
// a token) rejects with a plain TypeError, RangeError or Error before anything is sent.
import type { Host, HttpRequest, HttpResult } from './host';
import type { CreatedFeed, Feed, FeedInput, InputValue, Resource, Subtype } from './wire';
import { LIMITS } from './wire';
import { rawData } from './validate';
import { FeedError, elementIndexOf, parseRetryAfter, redact } from './errors';
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

export interface BatchOutcome {
  /** Request indices the service rejected (from the {success, failed} form), ascending; empty for the plain array form. */
  rejected: { index: number; reason: string }[];
  /** Number of elements stored. */
  stored: number;
}

// Shared by every request: headers are never built per call. Frozen, so an adapter that would change
// them fails loudly instead of leaking a header into the next request.
const READ_HEADERS: Record<string, string> = Object.freeze({ Accept: 'application/json' });

export class FeedClient {
  private readonly send_: Host['request'];
  private readonly baseUrl_: string;
  /** `/api/device/<escaped key>`: the start of every path. */
  private readonly device_: string;
  private readonly token_: string | undefined;
  private readonly timeoutMs_: number;
  /** Null without a token. */
  private readonly authHeaders_: Record<string, string> | null;
  private readonly writeHeaders_: Record<string, string> | null;

  /** `request` is called as a plain function: pass a bound one, e.g. `(r) => host.request(r)`. */
  constructor(request: Host['request'], options: ClientOptions) {
    this.send_ = request;
    this.baseUrl_ = options.baseUrl.replace(/\/+$/, '');
    this.device_ = '/api/device/' + encodeURIComponent(options.publicKey);
    this.token_ = options.token;
    this.timeoutMs_ = options.timeoutMs;
    if (options.token) {
      const authorization = 'Bearer ' + options.token;
      this.authHeaders_ = Object.freeze({ Accept: 'application/json', Authorization: authorization });
      this.writeHeaders_ = Object.freeze({
        Accept: 'application/json',
        Authorization: authorization,
        'Content-Type': 'application/json',
      });
    } else {
      this.authHeaders_ = null;
      this.writeHeaders_ = null;
    }
  }

  /** Operation 1. */
  async getResource(id: number, o?: CallOptions): Promise<Resource> {
    checkId(id, 'resource id');
    const path = this.device_ + '/resource/' + id + query(o);
    const payload = await this.exchange_('GET', path, undefined, this.readHeaders_(o), 0);
    const issue = recordIssue(payload, RESOURCE_FIELDS) ?? idIssue(payload as Resource, id);
    if (issue !== null) throw this.malformed_('GET', path, 'payload' + issue);
    return payload as Resource;
  }

  /** Operation 2: one resource per id, in order; over 100 ids go in several requests. */
  getResources(ids: readonly number[], o?: CallOptions): Promise<Resource[]> {
    return this.list_<Resource>(ids, '', RESOURCE_FIELDS, false, o);
  }

  /** Operation 3. */
  async createFeed(id: number, input: InputValue, o?: CallOptions): Promise<CreatedFeed> {
    checkId(id, 'resource id');
    checkInput(input, 'input');
    const headers = this.writeHeadersFor_('createFeed', o);
    const path = this.device_ + '/resource/' + id + '/feeds' + query(o);
    const payload = await this.exchange_('POST', path, '{"input":' + JSON.stringify(input) + '}', headers, 0);
    const issue = recordIssue(payload, CREATED_FIELDS) ?? idIssue(payload as CreatedFeed, id);
    if (issue !== null) throw this.malformed_('POST', path, 'payload' + issue);
    return payload as CreatedFeed;
  }

  /**
   * Operation 4, atomic on the service: a 4xx stores nothing and its `elementIndex` names the first bad
   * element. The batch is sent as one request whatever its size (splitting would break atomicity); an
   * empty batch sends nothing.
   */
  async createFeeds(elements: readonly FeedInput[], o?: CallOptions): Promise<BatchOutcome> {
    let body = '[';
    for (let i = 0; i < elements.length; i++) {
      const element = elements[i];
      checkId(element.id_resource, 'elements[' + i + '].id_resource');
      checkInput(element.input, 'elements[' + i + '].input');
      // Only the two documented fields, whatever else the caller's objects carry.
      body += (i === 0 ? '{"id_resource":' : ',{"id_resource":') + element.id_resource +
        ',"input":' + JSON.stringify(element.input) + '}';
    }
    return this.batch_(body + ']', elements.length, (i) => elements[i].id_resource, elements, o);
  }

  /**
   * Operation 4 with a body already encoded by the queue: `count` elements, the id_resource of element
   * i is `resourceAt(i)` (used to check the answer matches).
   */
  createFeedsEncoded(
    body: string,
    count: number,
    resourceAt: (i: number) => number,
    o?: CallOptions,
  ): Promise<BatchOutcome> {
    if (!Number.isSafeInteger(count) || count < 0) {
      return Promise.reject(new RangeError('count ' + String(count) + ' is not a non-negative integer'));
    }
    return this.batch_(body, count, resourceAt, null, o);
  }

  /** Operation 5: null where a resource has no feed. */
  firstFeeds(ids: readonly number[], o?: CallOptions): Promise<(Feed | null)[]> {
    return this.list_<Feed | null>(ids, '/feeds/first', FEED_FIELDS, true, o);
  }

  /** Operation 6: null where a resource has no feed. */
  lastFeeds(ids: readonly number[], o?: CallOptions): Promise<(Feed | null)[]> {
    return this.list_<Feed | null>(ids, '/feeds/last', FEED_FIELDS, true, o);
  }

  /** Operations 2, 5, 6: at most LIMITS.maxIdsInPath ids per request, answers concatenated in order. */
  private async list_<T>(
    ids: readonly number[],
    suffix: string,
    fields: Fields,
    nullable: boolean,
    o: CallOptions | undefined,
  ): Promise<T[]> {
    for (let i = 0; i < ids.length; i++) checkId(ids[i], 'ids[' + i + ']');
    const headers = this.readHeaders_(o);
    let all: T[] = [];
    for (let from = 0; from < ids.length; from += LIMITS.maxIdsInPath) {
      const to = Math.min(ids.length, from + LIMITS.maxIdsInPath);
      const path = this.device_ + '/resources/' + ids.slice(from, to).join(',') + suffix + query(o);
      const payload = await this.exchange_('GET', path, undefined, headers, 0);
      const issue = listIssue(payload, ids, from, to, fields, nullable);
      if (issue !== null) throw this.malformed_('GET', path, 'payload' + issue);
      all = from === 0 ? (payload as T[]) : all.concat(payload as T[]);
    }
    return all;
  }

  private async batch_(
    body: string,
    count: number,
    resourceAt: (i: number) => number,
    elements: readonly FeedInput[] | null,
    o: CallOptions | undefined,
  ): Promise<BatchOutcome> {
    const headers = this.writeHeadersFor_('createFeeds', o);
    if (count === 0) return { rejected: [], stored: 0 };
    const path = this.device_ + '/resources/feeds' + query(o);
    const payload = await this.exchange_('POST', path, body, headers, count);
    // The {success, failed} form is matched to elements by their inputs too: an encoded body is parsed
    // back for that, only on this rare path.
    const known = elements ?? (Array.isArray(payload) ? null : parseOwnBody(body, count));
    const outcome = batchOutcome(payload, count, resourceAt, known);
    if (typeof outcome === 'string') throw this.malformed_('POST', path, 'payload' + outcome);
    for (const r of outcome.rejected) r.reason = redact(r.reason, this.token_);
    return outcome;
  }

  /**
   * One exchange: the payload of a 200 answer whose envelope is well formed, else a FeedError.
   * `batchCount` is the element count of an operation-4 body (0 otherwise), to bound `elementIndex`.
   */
  private async exchange_(
    method: 'GET' | 'POST',
    path: string,
    body: string | undefined,
    headers: Record<string, string>,
    batchCount: number,
  ): Promise<unknown> {
    const url = this.baseUrl_ + path;
    const request: HttpRequest = body === undefined
      ? { method, url, headers, timeoutMs: this.timeoutMs_ }
      : { method, url, headers, body, timeoutMs: this.timeoutMs_ };
    let result: HttpResult;
    try {
      result = await this.send_(request);
    } catch (e) {
      // The host contract says an adapter never rejects; if one does, it is still a failed exchange
      // that may have reached the service, not a crash of the caller.
      throw this.fail_('network', 'network error on ' + method + ' ' + path + ': ' + String(e), { maybeDelivered: true });
    }
    if (result.kind === 'timeout') {
      throw this.fail_('timeout', 'timeout after ' + this.timeoutMs_ + ' ms on ' + method + ' ' + path, {
        maybeDelivered: result.maybeDelivered,
      });
    }
    if (result.kind === 'network') {
      throw this.fail_('network', 'network error on ' + method + ' ' + path + ': ' + result.message, {
        maybeDelivered: result.maybeDelivered,
      });
    }
    const status = result.status;
    if (status < 200 || status > 299) throw this.httpError_(method, path, status, result.retryAfter, result.body, batchCount);
    // The contract answers success with 200 only; another 2xx still means the service took the request.
    if (status !== 200) throw this.malformed_(method, path, 'unexpected HTTP ' + status, status);
    let envelope: unknown;
    try {
      envelope = JSON.parse(result.body);
    } catch {
      throw this.malformed_(method, path, 'body is not JSON');
    }
    if (!isRecord(envelope)) throw this.malformed_(method, path, 'body' + mismatch('object', envelope));
    if (envelope.success !== true) {
      const issue = envelope.success === false
        ? ': false with HTTP 200' + (typeof envelope.message === 'string' ? ': ' + clip(envelope.message) : '')
        : mismatch('boolean', envelope.success);
      throw this.malformed_(method, path, 'success' + issue);
    }
    if (typeof envelope.message !== 'string') throw this.malformed_(method, path, 'message' + mismatch('string', envelope.message));
    if (envelope.payload === undefined) throw this.malformed_(method, path, 'payload: missing');
    return envelope.payload;
  }

  private httpError_(
    method: string,
    path: string,
    status: number,
    retryAfter: string | null,
    body: string,
    batchCount: number,
  ): FeedError {
    let detail = '';
    try {
      const envelope: unknown = JSON.parse(body);
      if (isRecord(envelope) && typeof envelope.message === 'string') detail = clip(envelope.message);
    } catch {
      // Not a failure envelope (a proxy's HTML page, say): its text, below, says what happened.
    }
    if (detail === '') detail = clip(body.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim()) || 'empty answer';
    const index = batchCount > 0 && status >= 400 && status < 500 ? elementIndexOf(detail) : -1;
    return this.fail_('http', 'HTTP ' + status + ' on ' + method + ' ' + path + ': ' + detail, {
      status,
      retryAfterMs: parseRetryAfter(retryAfter),
      elementIndex: index < batchCount ? index : -1,
    });
  }

  /** A 2xx answer that is not what the request asked for: the service may have acted on it. */
  private malformed_(method: string, path: string, issue: string, status = 200): FeedError {
    return this.fail_('protocol', 'malformed answer to ' + method + ' ' + path + ': ' + issue, {
      status,
      maybeDelivered: true,
    });
  }

  /** Every FeedError of the client is made here, so no message can carry the token. */
  private fail_(kind: FeedErrorKind, message: string, details: FeedErrorDetails): FeedError {
    return new FeedError(kind, redact(message, this.token_), details);
  }

  private readHeaders_(o: CallOptions | undefined): Record<string, string> {
    const auth = o?.auth;
    if (auth === true && this.authHeaders_ === null) throw new Error('auth: true needs a token in the client options');
    return auth !== false && this.authHeaders_ !== null ? this.authHeaders_ : READ_HEADERS;
  }

  private writeHeadersFor_(method: string, o: CallOptions | undefined): Record<string, string> {
    if (this.writeHeaders_ === null) {
      throw new Error(method + ' needs a token: feed creation requires the Authorization header');
    }
    if (o?.auth === false) throw new Error(method + ' cannot send without the Authorization header (auth: false)');
    return this.writeHeaders_;
  }
}

function query(o: CallOptions | undefined): string {
  return o?.silent === true ? '?silent=true' : '';
}

function checkId(id: unknown, what: string): void {
  if (typeof id !== 'number') throw new TypeError(what + ' ' + String(id) + ' is not a number');
  if (!Number.isSafeInteger(id) || id <= 0) throw new RangeError(what + ' ' + String(id) + ' is not a positive safe integer');
}

function checkInput(input: unknown, what: string): void {
  const type = typeof input;
  if (type === 'number' ? !isFinite(input as number) : type !== 'boolean' && type !== 'string') {
    throw new TypeError(what + ' must be a finite number, a boolean or a string, not ' + typeName(input));
  }
}

// A server's text in a message stays short: a message lives as long as the error.
function clip(text: string): string {
  return text.length > 200 ? text.slice(0, 200) + '…' : text;
}

// ---- Checking answers ------------------------------------------------------------------------------
// A check returns null when the value fits, otherwise where and how it does not, relative to the value:
// `.subtype.data_restriction_end_range: expected integer, got string`. The path is only built on the way
// out of a failure, so a good answer costs no strings.

type Field =
  | 'integer'
  | 'integer|null'
  | 'string'
  | 'string|null'
  | 'boolean'
  | 'array'
  | 'input'
  | 'subtype'
  | 'feed|null';

type Fields = Readonly<Record<string, Field>>;

// The interface's tables (§2.2–2.4, contract: nulls for a resource without feeds), one entry per field
// of the wire type: the mapped types make the compiler insist that none is left out.
const SUBTYPE_FIELDS: { readonly [K in keyof Subtype]: Field } = {
  id_resource_subtype: 'integer',
  id_resource_type: 'integer',
  name: 'string',
  name_i18n: 'string',
  description: 'string|null',
  data_format_operation: 'integer',
  data_restriction_regex: 'string|null',
  data_restriction_begin_range: 'integer',
  data_restriction_end_range: 'integer',
  created_at: 'string',
  updated_at: 'string',
};

const FEED_FIELDS: { readonly [K in keyof Feed]: Field } = {
  id_resource_feed: 'integer',
  id_resource: 'integer',
  raw_data: 'string',
  created_at: 'string',
};

const CREATED_FIELDS: { readonly [K in keyof CreatedFeed]: Field } = {
  id_resource_feed: 'integer',
  id_resource: 'integer',
  raw_data: 'input',
  created_at: 'string',
};

const RESOURCE_FIELDS: { readonly [K in keyof Resource]: Field } = {
  id_resource: 'integer',
  id_device: 'integer',
  id_resource_subtype: 'integer',
  id_last_feed: 'integer|null',
  name: 'string',
  description: 'string',
  lifetime: 'integer',
  api_requests_usage: 'integer',
  api_network_usage: 'integer',
  api_network_income_usage: 'integer',
  api_network_outgoing_usage: 'integer',
  lifetime_updated_at: 'string|null',
  created_at: 'string',
  updated_at: 'string',
  active: 'integer',
  is_alive: 'boolean',
  is_dead: 'boolean',
  subtype: 'subtype',
  last_feed: 'feed|null',
  data_format: 'array',
};

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isInteger(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v);
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  // Numbers are shown (they say what is wrong and carry no secret); strings never are.
  return typeof v === 'number' ? 'number ' + String(v) : typeof v;
}

function mismatch(expected: string, v: unknown): string {
  return v === undefined ? ': missing' : ': expected ' + expected + ', got ' + typeName(v);
}

function fieldIssue(v: unknown, field: Field): string | null {
  switch (field) {
    case 'integer':
      return isInteger(v) ? null : mismatch('integer', v);
    case 'integer|null':
      return v === null || isInteger(v) ? null : mismatch('integer or null', v);
    case 'string':
      return typeof v === 'string' ? null : mismatch('string', v);
    case 'string|null':
      return v === null || typeof v === 'string' ? null : mismatch('string or null', v);
    case 'boolean':
      return typeof v === 'boolean' ? null : mismatch('boolean', v);
    case 'array':
      return Array.isArray(v) ? null : mismatch('array', v);
    case 'input':
      return typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string'
        ? null
        : mismatch('number, boolean or string', v);
    case 'subtype':
      return recordIssue(v, SUBTYPE_FIELDS);
    case 'feed|null':
      return v === null ? null : recordIssue(v, FEED_FIELDS);
  }
}

/** Checks every listed field; fields the table does not list are tolerated. */
function recordIssue(v: unknown, fields: Fields): string | null {
  if (!isRecord(v)) return mismatch('object', v);
  for (const key in fields) {
    const issue = fieldIssue(v[key], fields[key]);
    if (issue !== null) return '.' + key + issue;
  }
  return null;
}

function idIssue(record: { id_resource: number }, expected: number): string | null {
  return record.id_resource === expected ? null : '.id_resource: expected ' + expected + ', got ' + record.id_resource;
}

/** Operations 2, 5, 6: one record per id of `ids[from..to)`, in order (null allowed when `nullable`). */
function listIssue(
  payload: unknown,
  ids: readonly number[],
  from: number,
  to: number,
  fields: Fields,
  nullable: boolean,
): string | null {
  if (!Array.isArray(payload)) return mismatch('array', payload);
  if (payload.length !== to - from) return ': expected ' + (to - from) + ' records, got ' + payload.length;
  for (let i = 0; i < payload.length; i++) {
    const record: unknown = payload[i];
    if (nullable && record === null) continue;
    const issue = recordIssue(record, fields) ?? idIssue(record as { id_resource: number }, ids[from + i]);
    if (issue !== null) return '[' + i + ']' + issue;
  }
  return null;
}

/**
 * Operation 4's answer, in either form, as an outcome; or the issue that makes it malformed.
 * Plain array: one created feed per element, in order. `{success, failed}`: every element appears once
 * in one of the two lists. The public record does not show what a `failed` entry holds, so an entry is
 * mapped to its element by `index` when it gives one, else to the first element not yet matched with
 * its id_resource (and its input, when both sides know it). Entries that give an index go first, then
 * `success` entries (their raw_data is the input as sent), then the other `failed` entries, so that
 * a weaker match cannot take an element a stronger one names.
 */
function batchOutcome(
  payload: unknown,
  count: number,
  resourceAt: (i: number) => number,
  elements: readonly FeedInput[] | null,
): BatchOutcome | string {
  if (Array.isArray(payload)) {
    if (payload.length !== count) return ': expected ' + count + ' entries, got ' + payload.length;
    for (let i = 0; i < count; i++) {
      const issue = recordIssue(payload[i], CREATED_FIELDS) ?? idIssue(payload[i] as CreatedFeed, resourceAt(i));
      if (issue !== null) return '[' + i + ']' + issue;
    }
    return { rejected: [], stored: count };
  }
  if (!isRecord(payload)) return mismatch('array or {success, failed}', payload);
  const success = payload.success;
  const failed = payload.failed;
  if (!Array.isArray(success)) return '.success' + mismatch('array', success);
  if (!Array.isArray(failed)) return '.failed' + mismatch('array', failed);
  if (success.length + failed.length !== count) {
    return ': ' + success.length + ' stored and ' + failed.length + ' failed entries for ' + count + ' elements';
  }
  for (let i = 0; i < failed.length; i++) {
    const issue = failedIssue(failed[i]);
    if (issue !== null) return '.failed[' + i + ']' + issue;
  }
  const taken = new Uint8Array(count);
  const rejected: BatchOutcome['rejected'] = [];
  const match = (id: number, value: InputValue | undefined): number => {
    for (let i = 0; i < count; i++) {
      if (taken[i] === 0 && resourceAt(i) === id &&
        (value === undefined || elements === null || rawData(elements[i].input) === rawData(value))) {
        taken[i] = 1;
        return i;
      }
    }
    return -1;
  };
  for (let i = 0; i < failed.length; i++) {
    const entry = failed[i] as Record<string, unknown>;
    const index = entry.index;
    if (index === undefined) continue;
    if (!isInteger(index) || index < 0 || index >= count || taken[index] === 1 || resourceAt(index) !== entry.id_resource) {
      return '.failed[' + i + '].index: ' + String(index) + ' is not an unmatched element with id_resource ' + entry.id_resource;
    }
    taken[index] = 1;
    rejected.push({ index, reason: reasonOf(entry) });
  }
  for (let i = 0; i < success.length; i++) {
    const entry: unknown = success[i];
    const issue = recordIssue(entry, CREATED_FIELDS);
    if (issue !== null) return '.success[' + i + ']' + issue;
    const feed = entry as CreatedFeed;
    if (match(feed.id_resource, feed.raw_data) < 0) {
      return '.success[' + i + ']: no unmatched element with id_resource ' + feed.id_resource + ' and that raw_data';
    }
  }
  for (let i = 0; i < failed.length; i++) {
    const entry = failed[i] as Record<string, unknown>;
    if (entry.index !== undefined) continue;
    const index = match(entry.id_resource as number, entry.input as InputValue | undefined);
    if (index < 0) return '.failed[' + i + ']: no unmatched element with id_resource ' + entry.id_resource;
    rejected.push({ index, reason: reasonOf(entry) });
  }
  rejected.sort((a, b) => a.index - b.index);
  return { rejected, stored: success.length };
}

/** The elements of a body this client was given to send, or null if it is not what it should be. */
function parseOwnBody(body: string, count: number): FeedInput[] | null {
  try {
    const parsed: unknown = JSON.parse(body);
    return Array.isArray(parsed) && parsed.length === count ? (parsed as FeedInput[]) : null;
  } catch {
    return null;
  }
}

function failedIssue(entry: unknown): string | null {
  if (!isRecord(entry)) return mismatch('object', entry);
  const id = fieldIssue(entry.id_resource, 'integer');
  if (id !== null) return '.id_resource' + id;
  if (entry.input !== undefined) {
    const issue = fieldIssue(entry.input, 'input');
    if (issue !== null) return '.input' + issue;
  }
  if (entry.index !== undefined && !isInteger(entry.index)) return '.index' + mismatch('integer', entry.index);
  if (entry.message !== undefined && typeof entry.message !== 'string') return '.message' + mismatch('string', entry.message);
  if (entry.error !== undefined && typeof entry.error !== 'string') return '.error' + mismatch('string', entry.error);
  return null;
}

function reasonOf(entry: Record<string, unknown>): string {
  const text = typeof entry.message === 'string' ? entry.message : entry.error;
  return typeof text === 'string' && text !== '' ? clip(text) : 'rejected by the service';
}
