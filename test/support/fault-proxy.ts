// A real HTTP proxy on 127.0.0.1 in front of the local service that tests program request by request:
// pass, answer a failure itself, break or hold the connection before or after the service saw the
// request, lose it, let the service store it after the client gave up, slow it down, or rewrite the
// service's answer. It also keeps what the service accepted, for assertions.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { CreatedFeed, FeedInput } from '../../src/core/wire/wire';
import { operationOf } from '../scenarios/operation';
import type { Operation } from '../scenarios/operation';

export type FaultAction =
  | { do: 'pass' }
  /**
   * Answers `status` with the failure envelope, and `Retry-After`, `Date` (else the proxy's own clock's)
   * and `Location` when given; nothing is forwarded.
   */
  | { do: 'status'; status: number; message?: string; retryAfter?: string; date?: string; location?: string }
  /** Answers 200 with a body that is not JSON; `forward` (default true) lets the service act first. */
  | { do: 'malformed'; forward?: boolean }
  /** Destroys the connection, before forwarding (nothing arrived) or after (stored, answer lost). */
  | { do: 'reset'; after: boolean }
  /** Never answers, before forwarding or after; the client times out. */
  | { do: 'hold'; after: boolean }
  /**
   * Takes the request and drops the connection without forwarding it: a request lost on the way, which
   * the client cannot tell from one the service stored before the connection broke (maybeDelivered).
   */
  | { do: 'lose' }
  /**
   * Never answers; `ms` after the client gave up (closed the connection) the request is forwarded: a
   * service that stores a request its client timed out on.
   */
  | { do: 'late'; ms: number }
  /** Forwards, then holds the service's answer back for `ms`: a slow service. */
  | { do: 'slow'; ms: number }
  /**
   * Operation 4 in the later form of the platform (docs/interface.md, Operation 4 is atomic): the elements at `indices` are not
   * forwarded, and the answer is `{success: [...], failed: [...]}`.
   */
  | { do: 'failed'; indices: number[] }
  /**
   * Refuses (422, nothing stored) any operation-4 body holding an element with this resource and input;
   * `naming` says whether the message names its index as the service does (`element N: ...`).
   */
  | { do: 'reject'; resource: number; input: number | string | boolean; naming: boolean }
  /** Rewrites read answers so that `resource`'s subtype seems to accept [begin, end]. */
  | { do: 'widen'; resource: number; begin: number; end: number }
  /** Forwards, then answers with a status line that is not HTTP (`HTTP/1.1200OK`) and closes. */
  | { do: 'garble' }
  /** Forwards, then sends the service's status and headers but half its body, and closes. */
  | { do: 'truncate' }
  /**
   * Forwards, then answers the service's envelope padded with spaces to `bytes` (still valid JSON), in
   * chunks and with backpressure; `bloated` counts the bytes the socket took before the client left.
   */
  | { do: 'bloat'; bytes: number }
  /**
   * Answers `status` (a failure) with an HTML page of `bytes` bytes, as a proxy's error page, without
   * forwarding: with its Content-Length (`length`, default true) or chunked, with backpressure; `bloated`
   * counts the bytes the socket took before the client left.
   */
  | { do: 'page'; status: number; bytes: number; length?: boolean };

export interface FaultRule {
  /** The operation it applies to; any when omitted. */
  op?: Operation;
  /** How many matching requests it applies to (default 1); `always` keeps it for every one. */
  times?: number;
  always?: boolean;
  action: FaultAction;
}

/** A feed the service answered 200 for (operation 3 or 4), in the order the service created them. */
export type StoredFeed = Pick<CreatedFeed, 'id_resource_feed' | 'id_resource' | 'raw_data'>;

/** The header a test client uses to name a request, so it can later ask what became of it. */
export const TAG_HEADER = 'x-test-request';

interface Fate {
  /** The service received it. */
  forwarded: boolean;
  /** The proxy took it in a way the client cannot tell from delivery (lose, late): it may have arrived. */
  taken: boolean;
  /** Resolves once the proxy decides never to answer. */
  held: Promise<void>;
  hold: () => void;
  /** Resolves once the client closed the connection of a held request (and a late one is scheduled). */
  gone: Promise<void>;
  leave: () => void;
}

/** Runs `commit` `ms` from now: real time by default, the scenarios' virtual time in their backend. */
export type Later = (ms: number, commit: () => Promise<unknown>) => void;

interface Upstream {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export class FaultProxy {
  readonly stored: StoredFeed[] = [];
  /** How many requests each action was applied to, by `<operation> <action>` (`create reset after`, `last pass`). */
  readonly applied = new Map<string, number>();
  /** Bytes of `bloat` and `page` answers the sockets took. */
  bloated = 0;
  private rules: (FaultRule & { left: number })[] = [];
  private fates = new Map<string, Fate>();
  private sockets = new Set<Socket>();
  private server: http.Server;
  private port = 0;

  private constructor(
    private readonly upstream: URL,
    private readonly later: Later,
  ) {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  /** Starts a proxy on 127.0.0.1 (a free port) for the service at `upstream`; `later` schedules late commits. */
  static async start(upstream: string, later: Later = realTime): Promise<FaultProxy> {
    const target = new URL(upstream);
    if (target.hostname !== '127.0.0.1') throw new Error('the fault proxy only forwards to 127.0.0.1, not ' + target.hostname);
    const proxy = new FaultProxy(target, later);
    await proxy.listen();
    return proxy;
  }

  get url(): string {
    return 'http://127.0.0.1:' + this.port;
  }

  /** Adds rules; each request takes the first rule that matches its operation and has uses left. */
  faults(rules: FaultRule[]): void {
    for (const rule of rules) this.rules.push({ ...rule, left: rule.always ? Infinity : (rule.times ?? 1) });
  }

  clearFaults(): void {
    this.rules = [];
  }

  /**
   * Takes the proxy off the network (new connections are refused, as by a host that is down) or puts it
   * back on the same port. Connections already open are left alone.
   */
  async setDown(down: boolean): Promise<void> {
    if (down === !this.server.listening) return;
    if (down) await new Promise<void>((resolve) => this.server.close(() => resolve()));
    else await this.listen();
  }

  /** What became of the request tagged `tag`: whether it reached the service, and a promise of its hold. */
  fate(tag: string): Fate {
    let fate = this.fates.get(tag);
    if (fate === undefined) {
      let hold!: () => void;
      let leave!: () => void;
      const held = new Promise<void>((resolve) => (hold = resolve));
      const gone = new Promise<void>((resolve) => (leave = resolve));
      fate = { forwarded: false, taken: false, held, hold, gone, leave };
      this.fates.set(tag, fate);
    }
    return fate;
  }

  /** Forgets a finished request. */
  release(tag: string): void {
    this.fates.delete(tag);
  }

  /** Closes every kept-open connection that carries no request, as a server's keep-alive timeout does. */
  closeIdle(): void {
    this.server.closeIdleConnections();
  }

  /** Breaks every open connection, as a network that fails: a request on one may or may not have arrived. */
  dropConnections(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    this.dropConnections();
    await this.setDown(true);
  }

  private async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.port = (this.server.address() as AddressInfo).port;
  }

  private take(op: Operation, body: string): FaultAction {
    // A standing `reject` applies only to bodies that hold its element; other rules to every match.
    const rule = this.rules.find(
      (r) => r.left > 0 && (r.op === undefined || r.op === op) && (r.action.do !== 'reject' || findElement(body, r.action) >= 0),
    );
    if (rule !== undefined) rule.left--;
    const action = rule?.action ?? { do: 'pass' };
    const name = op + ' ' + actionName(action);
    this.applied.set(name, (this.applied.get(name) ?? 0) + 1);
    return action;
  }

  /** Writes `bytes` bytes of `pad` over and over with backpressure, then `end`, unless the client leaves first. */
  private stream(res: http.ServerResponse, pad: Buffer, bytes: number, end: string): void {
    let left = bytes;
    const more = (): void => {
      while (left > 0 && !res.destroyed) {
        const chunk = left < pad.length ? pad.subarray(0, left) : pad;
        left -= chunk.length;
        this.bloated += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', more);
      }
      if (!res.destroyed) res.end(end);
    };
    more();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = await readBody(req);
    const tagHeader = req.headers[TAG_HEADER];
    const tag = typeof tagHeader === 'string' ? tagHeader : null;
    const fate = tag === null ? null : this.fate(tag);
    const op = operationOf(req.method ?? 'GET', req.url ?? '/');
    const action = this.take(op, body);

    const forward = async (sent: string = body): Promise<Upstream> => {
      if (fate !== null) fate.forwarded = true;
      const answer = await this.forward(req, sent);
      if (answer.status === 200) this.keepStored(op, answer.body);
      return answer;
    };

    switch (action.do) {
      case 'pass':
        return relay(res, await forward());
      case 'status':
        return answer(res, action.status, failure(action.message ?? 'fault injected: status ' + action.status), {
          'retry-after': action.retryAfter,
          date: action.date,
          location: action.location,
        });
      case 'malformed':
        if (action.forward !== false) await forward();
        return answer(res, 200, '{"success": true, "payload": [');
      case 'reset':
        if (action.after) await forward();
        req.socket.destroy();
        return;
      case 'hold':
        if (action.after) await forward();
        res.on('close', () => fate?.leave());
        fate?.hold();
        return;
      case 'lose':
        if (fate !== null) fate.taken = true;
        req.socket.destroy();
        return;
      case 'late':
        if (fate !== null) fate.taken = true;
        res.on('close', () => {
          this.later(action.ms, () => forward());
          fate?.leave();
        });
        fate?.hold();
        return;
      case 'slow': {
        const upstream = await forward();
        await new Promise((resolve) => setTimeout(resolve, action.ms));
        return relay(res, upstream);
      }
      case 'failed':
        return answer(res, 200, await this.partial(body, action.indices, forward));
      case 'reject': {
        const index = findElement(body, action);
        const message = action.naming ? 'element ' + index + ': value rejected by the test' : 'a value was rejected by the test';
        return answer(res, 422, failure(message));
      }
      case 'widen': {
        const upstream = await forward();
        return relay(res, { ...upstream, body: widen(upstream.body, action) });
      }
      case 'garble':
        await forward();
        req.socket.end('HTTP/1.1200OK\r\ncontent-length: 0\r\n\r\n');
        return;
      case 'bloat': {
        const upstream = await forward();
        res.writeHead(upstream.status, { 'content-type': 'application/json' });
        return this.stream(res, Buffer.alloc(64 * 1024, 0x20), action.bytes - Buffer.byteLength(upstream.body), upstream.body);
      }
      case 'page': {
        const head = '<!DOCTYPE html><html><head><title>' + action.status + ' Service Unavailable</title></head><body><h1>Service Unavailable</h1><p>The server is temporarily unable to service your request.</p>';
        const tail = '</body></html>';
        res.writeHead(action.status, { 'content-type': 'text/html', ...(action.length === false ? {} : { 'content-length': String(action.bytes) }) });
        res.write(head);
        // The page's filler: markup, as a large error page is.
        const filler = Buffer.from('<div class="pad">                                                          </div>\n'.repeat(800));
        return this.stream(res, filler, action.bytes - head.length - tail.length, tail);
      }
      case 'truncate': {
        const upstream = await forward();
        const body = Buffer.from(upstream.body, 'utf8');
        const head = 'HTTP/1.1 ' + upstream.status + ' OK\r\ncontent-type: application/json\r\ncontent-length: ' + body.length + '\r\n\r\n';
        req.socket.write(head);
        req.socket.end(body.subarray(0, body.length >> 1));
        return;
      }
    }
  }

  /** Forwards the elements not at `indices` and answers in the `{success, failed}` form. */
  private async partial(body: string, indices: number[], forward: (sent: string) => Promise<Upstream>): Promise<string> {
    const elements = JSON.parse(body) as FeedInput[];
    const failed = elements.filter((_, i) => indices.includes(i));
    const kept = elements.filter((_, i) => !indices.includes(i));
    const upstream = kept.length > 0 ? await forward(JSON.stringify(kept)) : null;
    const success = upstream === null ? [] : (JSON.parse(upstream.body) as { payload: unknown[] }).payload;
    return JSON.stringify({ success: true, payload: { success, failed }, message: '' });
  }

  private keepStored(op: Operation, text: string): void {
    const payload = (JSON.parse(text) as { payload: CreatedFeed | CreatedFeed[] }).payload;
    if (op === 'create-one' || op === 'create') {
      for (const feed of Array.isArray(payload) ? payload : [payload]) {
        this.stored.push({ id_resource_feed: feed.id_resource_feed, id_resource: feed.id_resource, raw_data: feed.raw_data });
      }
    }
  }

  private forward(req: http.IncomingMessage, body: string): Promise<Upstream> {
    const headers: http.OutgoingHttpHeaders = { ...req.headers };
    delete headers[TAG_HEADER];
    delete headers.host;
    headers['content-length'] = Buffer.byteLength(body);
    if (req.method === 'GET') delete headers['content-length'];
    return new Promise((resolve, reject) => {
      const out = http.request(
        { host: '127.0.0.1', port: this.upstream.port, path: req.url, method: req.method, headers, agent: false },
        (answer) => {
          readBody(answer).then((text) => resolve({ status: answer.statusCode ?? 0, headers: answer.headers, body: text }), reject);
        },
      );
      out.on('error', reject);
      out.end(req.method === 'GET' ? undefined : body);
    });
  }
}

/** `reset after`, `status 503`, `late`: an action as the `applied` tally names it. */
export function actionName(action: FaultAction): string {
  if (action.do === 'status') return 'status ' + action.status;
  if (action.do === 'page') return 'page ' + action.status;
  if (action.do === 'reset' || action.do === 'hold') return action.do + (action.after ? ' after' : ' before');
  return action.do;
}

function realTime(ms: number, commit: () => Promise<unknown>): void {
  setTimeout(() => void commit().catch(() => undefined), ms);
}

/** The index of the first element of an operation-4 body with this resource and input, or -1. */
function findElement(body: string, target: { resource: number; input: unknown }): number {
  let elements: unknown;
  try {
    elements = JSON.parse(body);
  } catch {
    return -1;
  }
  if (!Array.isArray(elements)) return -1;
  return elements.findIndex((e: FeedInput) => e.id_resource === target.resource && e.input === target.input);
}

function widen(text: string, rule: { resource: number; begin: number; end: number }): string {
  const envelope = JSON.parse(text) as { payload: unknown };
  const records = Array.isArray(envelope.payload) ? envelope.payload : [envelope.payload];
  for (const record of records as { id_resource: number; subtype: Record<string, unknown> }[]) {
    if (record?.id_resource !== rule.resource) continue;
    record.subtype = { ...record.subtype, data_restriction_begin_range: rule.begin, data_restriction_end_range: rule.end };
  }
  return JSON.stringify(envelope);
}

function failure(message: string): string {
  return JSON.stringify({ success: false, payload: null, message });
}

/** Headers besides the service's own three; one left undefined is not sent (`date`: Node sends its clock's). */
type Extra = Record<'retry-after' | 'date' | 'location', string | undefined>;

function answer(res: http.ServerResponse, status: number, body: string, extra?: Partial<Extra>): void {
  const headers: http.OutgoingHttpHeaders = {
    'content-type': 'application/json',
    'content-language': 'en',
    'content-length': Buffer.byteLength(body),
  };
  for (const [name, value] of Object.entries(extra ?? {})) if (value !== undefined) headers[name] = value;
  res.writeHead(status, headers).end(body);
}

function relay(res: http.ServerResponse, upstream: Upstream): void {
  const retryAfter = upstream.headers['retry-after'];
  answer(res, upstream.status, upstream.body, { 'retry-after': typeof retryAfter === 'string' ? retryAfter : undefined });
}

/** The whole body of a request or response, as UTF-8 text. */
export function readBody(stream: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stream.on('error', reject);
  });
}
