// Host['request'] over the SDK's ECMA-419 HTTP client (`embedded:network/http/client`,
// examples/io/tcp/httpclient/httpclient.js): one connection, kept open, carries every request in turn
// (batches, read-backs, command polls, keep-alive reads), so a device pays a TCP and TLS handshake per
// connection rather than per request. When the server closes it, or a request fails or times out, the
// connection is dropped and the next request opens a new one. It never rejects.
//
// - The client runs over classic-stream.ts, the SDK's classic Socket or SecureSocket (that file says why),
//   which tells this host every byte the socket took. A request counts as written (maybeDelivered when
//   no answer comes) once the socket took its last byte, or once an answer began: a connect that fails
//   took nothing; a POST written on a kept-open connection that the server had just closed took all of
//   it, and the service may have it.
// - httpclient.js has no timeout: one Timer of `timeoutMs`, armed as the exchange takes the connection (a
//   new one, or the open one), covers every phase (the connect, a TLS handshake, the write, the answer),
//   fails the exchange and closes the connection, since its answer could still arrive on it.
// - httpclient.js never looks at `Connection: close`: such an answer drops the connection here, or the
//   next request would be written to a socket the server is closing.
// - The log gets one line for a connection that carried answers and ended between them, with why (the
//   server closed it while idle, or asked to close it). One that ends under a request is that request's
//   failure, which the core says once per failing endpoint (retry-ladder.ts): a line here too would come
//   with every try of a partial outage that resets each write.
// - Each exchange starts from a promise job and its answer is decoded in another (http.ts says why).
// - The body goes as the slices of one UTF-8 copy (native `ArrayBuffer.fromString`), let go of once
//   written, so it is not held beside the answer; the answer is read into the host's one AnswerBody
//   (answer-body.ts: reserved at its creation, bounded by the request, never by what the peer announces)
//   and decoded natively. A 2xx answer beyond the bound drops the connection, its outcome unknown; any
//   other status is that status, its first bytes the body, the rest dropped with the connection.
import type { Host, HttpRequest, LogLevel } from '../../../src/core/host/host';
import { errorText } from '../../../src/core/wire/errors';
import { ClassicStream } from './classic-stream';
import type { StreamLink } from './classic-stream';
import { AnswerBody, DEFAULT_MAX_ANSWER_BYTES, isFailureStatus, tooLarge } from './answer-body';
import { Exchange, inTurn, keepHeader } from './exchange';
import type { AnswerHeaders, Ending } from './exchange';
import type { ClientRequest, HttpClient, Sdk } from './sdk';
import type { HttpOptions } from './http';
import { NO_TLS, targetOf, tlsDictionary } from './target';
import type { Target } from './target';

type KeepAliveSdk = Pick<Sdk, 'HTTPClient' | 'Socket' | 'SecureSocket' | 'Timer' | 'decode' | 'encode'>;

/** The answer's headers the exchange reads (httpclient.js keeps only these). */
const HEADERS_KEPT = Object.freeze(['content-length', 'retry-after', 'date', 'location', 'connection']);

/**
 * The classic socket resolves the host's name itself: httpclient.js's resolver step hands the name on.
 * (The SDK's UDP resolver would add a DNS client beside the one the classic socket already uses.)
 */
class NameAsAddress {
  resolve(options: { host: string; onResolved(host: string, address: string): void }): void {
    options.onResolved(options.host, options.host);
  }
}

export function createKeepAliveHttp(sdk: KeepAliveSdk, options: HttpOptions = {}, log?: (level: LogLevel, message: string) => void): Host['request'] {
  const link = new Link(sdk, tlsDictionary(options.secure), log);
  const answer = new AnswerBody(options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES);
  return inTurn((req) => new Promise((resolve) => new LinkExchange(sdk, link, req, answer, resolve).start()), sdk.decode);
}

/** The one connection: its client while it is open, the exchange it carries, why it ended. */
class Link implements StreamLink {
  private client: HttpClient | null = null;
  /** `host:port` and the scheme of the open client. */
  private origin = '';
  /** Counts clients: a client's late onError must not end its successor. */
  private generation = 0;
  /** Connections opened so far, and the answers the open one carried. */
  private opened = 0;
  private carried = 0;
  /** Why the last connection ended, as the socket saw it. */
  reason: string | null = null;
  current: LinkExchange | null = null;

  constructor(
    private readonly sdk: KeepAliveSdk,
    private readonly tls: Record<string, unknown>,
    private readonly log?: (level: LogLevel, message: string) => void,
  ) {}

  taken(bytes: number): void {
    this.current?.took(bytes);
  }

  ended(reason: string): void {
    this.reason = reason;
  }

  /** Whether a request to `target` goes on the connection that is open. */
  isOpenTo(target: Target): boolean {
    return this.client !== null && this.origin === originOf(target);
  }

  /** The client for `target`: the open one, or a new one (the old one closed); null when it failed at once. */
  clientFor(target: Target): HttpClient | null {
    if (this.isOpenTo(target)) return this.client;
    this.drop(null);
    const generation = ++this.generation;
    this.reason = null;
    this.opened++;
    this.carried = 0;
    const { sdk } = this;
    const client = new sdk.HTTPClient({
      host: target.host,
      port: target.port,
      onError: (e) => this.lost(generation, e),
      dns: { io: NameAsAddress },
      socket: { io: ClassicStream, Socket: target.secure ? sdk.SecureSocket : sdk.Socket, Timer: sdk.Timer, secure: target.secure ? this.tls : undefined, link: this },
    });
    // httpclient.js reports a socket that could not be made from inside its constructor.
    if (generation !== this.generation) return null;
    this.client = client;
    this.origin = originOf(target);
    return client;
  }

  /** An answer came whole on the open connection. */
  answered(): void {
    this.carried++;
  }

  /** Closes the open connection, if any, and says `why` it ended: the next request opens a new one. */
  drop(why: string | null): void {
    const client = this.client;
    if (client === null) return;
    this.client = null;
    this.generation++;
    client.close();
    if (why !== null) this.report(why);
  }

  /** The client of `generation` failed or was closed by the server while idle; it closed itself. */
  private lost(generation: number, e: unknown): void {
    if (generation !== this.generation) return;
    this.generation++;
    this.client = null;
    if (e !== undefined && this.reason === null) this.reason = errorText(e);
    this.report(this.reason ?? 'closed');
  }

  /** One line per connection that worked and ended between requests: a failed request or connect is the core's to report. */
  private report(why: string): void {
    if (this.carried === 0) return;
    this.log?.('info', 'link: connection ' + this.opened + ' to ' + this.origin + ' ended after ' + this.carried + ' answer' + (this.carried === 1 ? '' : 's') + ' (' + why + '); the next request opens a new one');
  }
}

function originOf(target: Target): string {
  return (target.secure ? 'https://' : 'http://') + target.host + ':' + target.port;
}

/** One request on the link, from its options to its result; every reference is dropped once it settled. */
class LinkExchange extends Exchange {
  private request: ClientRequest | null = null;
  private body: ArrayBuffer | null = null;
  private sent = 0;
  /** Bytes of the whole request as httpclient.js writes it, and how many of them the socket took. */
  private size = 0;
  private taken = 0;
  private readonly kept: AnswerHeaders = { retryAfter: null, date: null, location: null };
  private closing = false;
  /** The host's body, once this exchange's answer headers came: null before, and once it settled. */
  private answer: AnswerBody | null = null;
  private fresh = true;
  private secure = false;

  constructor(
    private readonly sdk: KeepAliveSdk,
    private readonly link: Link,
    private readonly req: HttpRequest,
    /** The host's body, which this exchange's answer is read into. */
    private readonly reserved: AnswerBody,
    resolve: (ending: Ending) => void,
  ) {
    super(sdk.Timer, resolve);
  }

  protected get reached(): boolean {
    return this.taken >= this.size || this.status > 0;
  }

  took(bytes: number): void {
    this.taken += bytes;
  }

  start(): void {
    const { sdk, req, link } = this;
    const target = targetOf(req.url);
    if (target === null) return this.fail('not an http or https URL', false);
    if (target.secure && sdk.SecureSocket === undefined) return this.fail(NO_TLS, false);
    this.secure = target.secure;
    this.reserved.begin(req.maxResponseBytes);
    const headers = new Map<string, string>();
    // httpclient.js writes `METHOD path HTTP/1.1`, its own host line, each header, a blank line. Header
    // text is ASCII here; a non-ASCII value would make the request count as written a little early.
    let size = req.method.length + target.path.length + 12 + target.host.length + 8;
    for (const name in req.headers) {
      headers.set(name, req.headers[name]);
      size += name.length + req.headers[name].length + 4;
    }
    if (req.body !== undefined) {
      const body = sdk.encode(req.body);
      this.body = body;
      headers.set('Content-Length', String(body.byteLength));
      size += 18 + String(body.byteLength).length + body.byteLength;
    }
    this.size = size + 2;
    this.fresh = !link.isOpenTo(target);
    link.current = this;
    const client = link.clientFor(target);
    if (client === null) return this.fail(this.failure('cannot connect to ' + target.host + ':' + target.port), false);
    this.arm(req.timeoutMs);
    this.request = client.request({
      method: req.method,
      path: target.path,
      headers,
      headersMask: HEADERS_KEPT as string[],
      onHeaders: (status, kept) => this.headers(status, kept),
      onReadable: (count) => this.readable(count),
      onWritable: (count) => this.writable(count),
      onDone: (error) => (error === null ? this.done() : this.fail(this.failure(this.status > 0 ? 'connection closed before the answer was complete' : 'connection failed or closed'), this.reached)),
    });
  }

  private headers(status: number, kept: Map<string, string>): void {
    this.status = status;
    kept.forEach((value, name) => keepHeader(this.kept, name, value));
    this.closing = kept.get('connection')?.toLowerCase() === 'close';
    const answer = this.reserved;
    const length = kept.get('content-length');
    // Fails here, inside httpclient.js's onHeaders: it sees itself closed and reads no further. A
    // failure's length does not matter: its first bytes are read.
    if (length !== undefined && !isFailureStatus(status) && !answer.expect(length)) return this.fail(tooLarge(answer.bound), true);
    this.answer = answer;
  }

  /** Reads what arrived, unless it would outgrow the bound: then none of it, but a failure's first bytes (see http.ts, `read`). */
  private readable(count: number): void {
    const answer = this.answer;
    if (answer !== null && !answer.fits(count)) {
      if (!isFailureStatus(this.status)) return this.fail(tooLarge(answer.bound), true);
      const piece = answer.room > 0 ? this.request?.read(answer.room) : undefined;
      if (piece !== undefined) answer.add(piece);
      // The rest of the answer is never read: the connection goes with it.
      this.link.drop('the rest of a long failure answer was dropped');
      return this.finish({ kind: 'answer', status: this.status, ...answer.takePrefix(), ...this.kept });
    }
    const piece = this.request?.read(count);
    if (piece !== undefined && answer !== null) answer.add(piece);
  }

  /** Room for `room` more bytes of the body: the next slice of it. */
  private writable(room: number): void {
    const body = this.body;
    if (body === null || this.request === null) return;
    const count = Math.min(room, body.byteLength - this.sent);
    const from = this.sent;
    this.sent += count;
    this.request.write(new Uint8Array(body, from, count));
    // Written whole: not held while the answer arrives (httpclient.js asks for no more).
    if (this.sent === body.byteLength) this.body = null;
  }

  private done(): void {
    const body = this.reserved.take();
    this.link.answered();
    if (this.closing) this.link.drop('the server asked to close it');
    this.finish({ kind: 'answer', status: this.status, ...body, ...this.kept });
  }

  /** `what` with the socket's reason; a new https connection that failed before a byte went may lack its CA. */
  private failure(what: string): string {
    const reason = this.link.reason;
    const hint = this.secure && this.fresh && this.taken === 0 ? ' (https: is the CA of the server among the app\'s resources?)' : '';
    return what + (reason === null ? '' : ': ' + reason) + hint;
  }

  /** Drops the connection when the request went on it and no answer came whole (unsaid: the core reports the failure); drops every reference. */
  protected release(ending: Ending): void {
    if (this.link.current === this) this.link.current = null;
    if (ending.kind !== 'answer' && ending.kind !== 'response' && this.request !== null) this.link.drop(null);
    this.request = null;
    this.body = null;
    this.answer = null;
  }
}
