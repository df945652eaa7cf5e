// An in-memory stand-in for the service, for the agent's unit tests: it answers operations 1, 2, 4
// and 6 as docs/interface.md says, and can be told to fail in each way a real network and server fail
// (operation 4 and operation 6, the read-back of reconciliation).
// Timeouts happen in virtual time. Integration tests use the real local service instead.
import type { Host, HttpRequest, HttpResult, LogLevel, QueueStorage } from '../../src/core/host/host';
import type { InputValue } from '../../src/core/wire/wire';
import type { VirtualClock } from './virtual-clock';

export interface FakeResource {
  id: number;
  begin?: number;
  end?: number;
  regex?: string | null;
  lifetime?: number;
}

/** What happens to one request. `store` says whether the service acted on it before the failure. */
export type Fault =
  | { kind: 'status'; status: number; message?: string; retryAfter?: string }
  | { kind: 'network'; maybeDelivered: boolean; store?: boolean }
  | { kind: 'timeout'; store?: boolean }
  | { kind: 'body'; body: string; store?: boolean };

export interface StoredFeed {
  id: number;
  resource: number;
  input: InputValue;
  at: number;
}

export class FakeService {
  readonly feeds: StoredFeed[] = [];
  readonly requests: { at: number; method: string; url: string; elements: number; silent: boolean }[] = [];
  readonly logs: { level: LogLevel; message: string }[] = [];
  /** Faults for the next operation-4 requests, first one first. */
  readonly faults: Fault[] = [];
  /** Decides a fault for each operation-4 request; consulted when `faults` is empty. */
  faultFor: ((n: number) => Fault | null) | null = null;
  /** Decides a fault for each operation-6 request (`store` means nothing there). */
  readFaultFor: (() => Fault | null) | null = null;
  /** Elements the service refuses (answer 422, or an entry of `failed`). */
  refuse: (resource: number, input: InputValue) => boolean = () => false;
  /** Name the first bad element's index in the 4xx message, as the local service does. */
  nameIndex = true;
  /** Answer operation 4 in the later `{success, failed}` form (not atomic). */
  failedForm = false;
  /** Larger bodies get 413. */
  maxElements = 1000;
  /** Reads fail with a network error (the service is unreachable). */
  unreachable = false;
  token: string;
  /** The device's resources: a copy, so a test may remove one. */
  readonly resources: FakeResource[];
  private nextFeedId = 1;

  constructor(
    readonly clock: VirtualClock,
    resources: readonly FakeResource[],
    token = 'T0KEN-secret-1234',
  ) {
    this.resources = [...resources];
    this.token = token;
  }

  /** A command: a feed written to a resource by someone else (operation 3 from the platform's side). */
  command(resource: number, input: InputValue): number {
    return this.store(resource, input);
  }

  stored(resource: number): InputValue[] {
    return this.feeds.filter((f) => f.resource === resource).map((f) => f.input);
  }

  host(storage?: QueueStorage): Host {
    return {
      request: (req) => this.request(req),
      now: this.clock.now,
      setTimer: this.clock.setTimer,
      clearTimer: this.clock.clearTimer,
      log: (level, message) => {
        this.logs.push({ level, message });
      },
      ...(storage ? { storage } : {}),
    };
  }

  private store(resource: number, input: InputValue): number {
    const id = this.nextFeedId++;
    this.feeds.push({ id, resource, input, at: this.clock.now() });
    return id;
  }

  private async request(req: HttpRequest): Promise<HttpResult> {
    // Parsed by hand, not with URL: this service runs on XS too (the property test), where there is none.
    const [whole, query = ''] = req.url.split('?');
    const silent = query.split('&').indexOf('silent=true') >= 0;
    const path = whole.replace(/^[a-z]+:\/\/[^/]+/, '').split('/').slice(4); // after /api/device/KEY
    let elements = 0;
    let body: unknown = null;
    if (req.body !== undefined) {
      body = JSON.parse(req.body);
      elements = Array.isArray(body) ? body.length : 1;
    }
    this.requests.push({ at: this.clock.now(), method: req.method, url: req.url, elements, silent });
    const authorized = req.headers.Authorization === 'Bearer ' + this.token;
    if (req.method === 'POST' && path[0] === 'resources' && path[1] === 'feeds') {
      const fault = this.faults.shift() ?? this.faultFor?.(elements) ?? null;
      return this.createFeeds(body as { id_resource: number; input: InputValue }[], authorized, fault, req.timeoutMs);
    }
    if (this.unreachable) return { kind: 'network', message: 'connect ECONNREFUSED', maybeDelivered: false };
    if (req.headers.Authorization !== undefined && !authorized) return this.fail(401, 'invalid token');
    const ids = path[1].split(',').map(Number);
    if (path[0] === 'resource') return this.resourceAnswer(ids, true);
    if (path[2] === 'feeds' && path[3] === 'last') {
      const fault = this.readFaultFor?.() ?? null;
      if (fault !== null) return this.failure(fault, req.timeoutMs);
      return ok(ids.map((id) => this.lastFeed(id)));
    }
    return this.resourceAnswer(ids, false);
  }

  private lastFeed(resource: number) {
    const last = this.feeds.filter((f) => f.resource === resource).pop();
    return last === undefined ? null : { id_resource_feed: last.id, id_resource: resource, raw_data: raw(last.input), created_at: '2026-11-21 12:00:00' };
  }

  /** What the agent sees of a fault (a timeout in virtual time). */
  private async failure(fault: Fault, timeoutMs: number): Promise<HttpResult> {
    if (fault.kind === 'status') return this.fail(fault.status, fault.message ?? 'injected failure', fault.retryAfter ?? null);
    if (fault.kind === 'network') return { kind: 'network', message: 'socket hang up', maybeDelivered: fault.maybeDelivered };
    if (fault.kind === 'body') return { kind: 'response', status: 200, retryAfter: null, body: fault.body };
    await new Promise<void>((resolve) => this.clock.setTimer(timeoutMs, resolve));
    return { kind: 'timeout', maybeDelivered: true };
  }

  private resourceAnswer(ids: number[], one: boolean): HttpResult {
    const missing = ids.find((id) => !this.resources.some((r) => r.id === id));
    if (missing !== undefined) return this.fail(404, 'resource ' + missing + ' not found');
    const records = ids.map((id) => resourceRecord(this.resources.find((r) => r.id === id)!, this.lastFeed(id)));
    return ok(one ? records[0] : records);
  }

  private async createFeeds(
    elements: { id_resource: number; input: InputValue }[],
    authorized: boolean,
    fault: Fault | null,
    timeoutMs: number,
  ): Promise<HttpResult> {
    if (fault !== null) {
      if (fault.kind !== 'status' && fault.store === true) for (const e of elements) this.store(e.id_resource, e.input);
      return this.failure(fault, timeoutMs);
    }
    if (!authorized) return this.fail(401, 'invalid token');
    if (elements.length > this.maxElements) return this.fail(413, 'more than ' + this.maxElements + ' elements');
    if (this.failedForm) {
      const success: unknown[] = [];
      const failed: unknown[] = [];
      for (const e of elements) {
        if (this.refuse(e.id_resource, e.input)) failed.push({ id_resource: e.id_resource, input: e.input, message: 'refused' });
        else success.push(created(this.store(e.id_resource, e.input), e));
      }
      return ok({ success, failed });
    }
    const bad = elements.findIndex((e) => this.refuse(e.id_resource, e.input) || !this.resources.some((r) => r.id === e.id_resource));
    if (bad >= 0) {
      const e = elements[bad];
      const known = this.resources.some((r) => r.id === e.id_resource);
      const what = known ? 'value ' + JSON.stringify(e.input) + ' refused' : 'resource ' + e.id_resource + ' not found';
      return this.fail(known ? 422 : 404, (this.nameIndex ? 'element ' + bad + ': ' : '') + what);
    }
    return ok(elements.map((e) => created(this.store(e.id_resource, e.input), e)));
  }

  private fail(status: number, message: string, retryAfter: string | null = null): HttpResult {
    return { kind: 'response', status, retryAfter, body: JSON.stringify({ success: false, payload: null, message }) };
  }
}

function ok(payload: unknown): HttpResult {
  return { kind: 'response', status: 200, retryAfter: null, body: JSON.stringify({ success: true, payload, message: '' }) };
}

function raw(input: InputValue): string {
  return typeof input === 'boolean' ? (input ? '1' : '0') : String(input);
}

function created(id: number, e: { id_resource: number; input: InputValue }) {
  return { raw_data: e.input, id_resource: e.id_resource, created_at: '2026-11-21 12:00:00', id_resource_feed: id };
}

function resourceRecord(r: FakeResource, lastFeed: { id_resource_feed: number } | null) {
  const stamp = '2026-11-21 12:00:00';
  return {
    id_resource: r.id, id_device: 1, id_resource_subtype: r.id, id_last_feed: lastFeed?.id_resource_feed ?? null, name: 'resource ' + r.id,
    description: '', lifetime: r.lifetime ?? 15, api_requests_usage: 0, api_network_usage: 0,
    api_network_income_usage: 0, api_network_outgoing_usage: 0, lifetime_updated_at: null,
    created_at: stamp, updated_at: stamp, active: 1, is_alive: false, is_dead: true,
    subtype: {
      id_resource_subtype: r.id, id_resource_type: 1, name: 'subtype', name_i18n: 'subtype', description: null,
      data_format_operation: 0, data_restriction_regex: r.regex ?? null,
      data_restriction_begin_range: r.begin ?? -1000000, data_restriction_end_range: r.end ?? 1000000,
      created_at: stamp, updated_at: stamp,
    },
    last_feed: lastFeed, data_format: [],
  };
}
