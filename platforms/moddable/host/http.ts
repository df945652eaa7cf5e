// Host['request'] over the SDK's classic HTTP client (`Request` from "http", modules/network/http/http.js):
// one connection per request, since it always sends `Connection: close`; SecureSocket for https URLs.
// Every way an exchange fails becomes an HttpResult with the right `maybeDelivered`: it never rejects.
//
// - The body is streamed. `body: true` makes http.js ask for it in fragments (callback message 0) no
//   larger than the room in the socket, and the adapter sends Content-Length in bytes itself. A body
//   given whole is written in one call, which throws "can't write all data" once it outgrows the socket's
//   buffer (1 KB on lin, tcp_sndbuf on lwip): a batch of 100 samples is about 3.3 KB. An ASCII body (every
//   batch of numbers; a native regex test says so) goes as slices of its text, which the socket writes as
//   the same bytes; only one with other characters is measured and copied into UTF-8 in JavaScript.
// - The answer is read fragment by fragment (callback message 4, `request.read`) into the host's one
//   AnswerBody (answer-body.ts, reserved at its creation), bounded by the request: not `response: ArrayBuffer`, with which http.js keeps every
//   fragment of an answer of any size and then joins them. A 2xx answer beyond the bound closes the
//   request, its outcome unknown; any other status is that status, its first bytes the body, the rest
//   dropped with the request. It is decoded natively (`String.fromArrayBuffer`), not byte by byte.
// - http.js writes each fragment the moment the callback returns it, inside the socket's callback. Once
//   that call returns with the last one, the socket has taken the whole request and the service may act
//   on it (maybeDelivered); before, it cannot, its Content-Length not met: a write that throws (lin's
//   "write failed") took nothing. A request without a body went out when the first callback is asked
//   for it: http.js asks only once the head was written.
// - http.js runs inside the socket's callback, where nobody catches for us: on lin a refused connection
//   throws "write failed" from the first write, a garbled status line throws "unexpected status format",
//   and an exception escaping a host callback aborts the app (fxAbort). The socket's callback is wrapped
//   so that such a throw fails the exchange instead.
// - http.js has no timeout: one Timer of `timeoutMs`, armed as the request is made, covers every phase
//   (the name, the connect, a TLS handshake, the write, the answer) and closes the request, socket and
//   all: an exchange settles by its deadline whatever the socket does (a blackhole, a stalled handshake
//   or answer); a timeout is maybeDelivered once the socket took the whole request or a status came.
// - Each exchange starts from a promise job, and its answer is decoded in another, each on a fresh
//   stack: http.js's constructor and its socket callback go deep, and adding the agent's calls below the
//   one and the decoding above the other overflowed the 384-slot stack of an ESP32 build (measured on a
//   lin build, docs/moddable.md).
import type { Host, HttpRequest } from '../../../src/core/host/host';
import { errorText } from '../../../src/core/wire/errors';
import { utf8Length, utf8Write } from '../../../src/core/wire/utf8';
import { AnswerBody, DEFAULT_MAX_ANSWER_BYTES, isFailureStatus, tooLarge } from './answer-body';
import { Exchange, inTurn, keepHeader } from './exchange';
import type { AnswerHeaders, Ending } from './exchange';
import type { RequestOptions, Sdk, SdkRequest } from './sdk';
import { HEADER, REQUEST_FRAGMENT, RESPONSE_COMPLETE, RESPONSE_FRAGMENT, STATUS } from './sdk';
import { NO_TLS, targetOf, tlsDictionary } from './target';

export interface HttpOptions {
  /**
   * SecureSocket's `secure` options for https URLs, over `{protocolVersion: 0x303}` (TLS 1.2). The CA
   * certificates that verify the server are the manifest's `resources` (see manifest.json), unless a
   * `certificate` is given here.
   */
  secure?: Record<string, unknown>;
  /**
   * The most bytes of an answer the host holds, whatever the request allows (default 16,384:
   * answer-body.ts). A longer answer is dropped as garbled and the core reads back.
   */
  maxAnswerBytes?: number;
}

export function createHttp(sdk: Pick<Sdk, 'Request' | 'SecureSocket' | 'Timer' | 'decode'>, options: HttpOptions = {}): Host['request'] {
  const tls = tlsDictionary(options.secure);
  const answer = new AnswerBody(options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES);
  return inTurn((req) => new Promise((resolve) => new RequestExchange(sdk, tls, req, answer, resolve).start()), sdk.decode);
}

/** One request, from the dictionary to the result; every reference is dropped once it settled. */
class RequestExchange extends Exchange {
  private request: SdkRequest | null = null;
  /** The body, until it was handed over: its text when it is ASCII, else its UTF-8; null for none. */
  private body: string | ArrayBuffer | null = null;
  private bodyBytes = 0;
  private sent = 0;
  /** The last fragment was handed to http.js, which writes it before its socket callback returns. */
  private handed = false;
  /** The socket took the whole request. */
  private written = false;
  /** A failure's answer was longer than the bound: its first bytes were kept, the rest is dropped with the request. */
  private cut = false;
  private readonly kept: AnswerHeaders = { retryAfter: null, date: null, location: null };
  private secure = false;

  constructor(
    private readonly sdk: Pick<Sdk, 'Request' | 'SecureSocket' | 'Timer' | 'decode'>,
    /** SecureSocket's `secure` dictionary, for an https URL. */
    private readonly tls: Record<string, unknown>,
    private readonly req: HttpRequest,
    /** The host's body, which this exchange's answer is read into. */
    private readonly answer: AnswerBody,
    resolve: (ending: Ending) => void,
  ) {
    super(sdk.Timer, resolve);
    answer.begin(req.maxResponseBytes);
  }

  protected get reached(): boolean {
    return this.written || this.status > 0;
  }

  start(): void {
    const { sdk, req } = this;
    const target = targetOf(req.url);
    if (target === null) return this.fail('not an http or https URL', false);
    const { secure, host, port } = target;
    this.secure = secure;
    if (secure && sdk.SecureSocket === undefined) return this.fail(NO_TLS, false);
    const headers: string[] = [];
    for (const name in req.headers) headers.push(name, req.headers[name]);
    if (req.body !== undefined) {
      // In the function, not at module level: a preloaded RegExp crashes XS 8.2.3 (src/core/wire/errors.ts).
      if (/^[\x00-\x7f]*$/.test(req.body)) {
        this.body = req.body;
        this.bodyBytes = req.body.length;
      } else {
        const body = new ArrayBuffer(utf8Length(req.body));
        utf8Write(req.body, new Uint8Array(body), 0);
        this.body = body;
        this.bodyBytes = body.byteLength;
      }
      headers.push('Content-Length', String(this.bodyBytes));
    }
    // http.js names the host without its port; a server behind a shared address needs both.
    if (port !== (secure ? 443 : 80)) headers.push('Host', host + ':' + port);
    const dictionary: RequestOptions = { host, port, path: target.path, method: req.method, headers, body: true };
    if (secure) {
      dictionary.Socket = sdk.SecureSocket;
      dictionary.secure = this.tls;
    }
    let request: SdkRequest;
    try {
      request = new sdk.Request(dictionary);
    } catch (e) {
      // Name resolution, the socket, a TLS certificate resource that is missing: nothing was sent.
      return this.fail('cannot connect to ' + host + ':' + port + ': ' + errorText(e), false);
    }
    this.request = request;
    this.arm(req.timeoutMs);
    request.callback = (message, value, etc) => this.onMessage(message, value, etc);
    const socket = request.socket;
    if (socket !== undefined) {
      const inner = socket.callback;
      socket.callback = (message, value) => {
        try {
          inner.call(socket, message, value);
        } catch (e) {
          return this.fail(errorText(e), this.reached);
        }
        if (this.handed) this.written = true;
      };
    }
  }

  private onMessage(message: number, value: unknown, etc: unknown): string | ArrayBuffer | undefined {
    if (this.settled) return undefined;
    if (message === REQUEST_FRAGMENT) return this.fragment(value as number);
    if (message === STATUS) this.status = value as number;
    else if (message === HEADER) this.header(value as string, String(etc));
    else if (message === RESPONSE_FRAGMENT) this.read(value as number);
    else if (message === RESPONSE_COMPLETE) this.finish({ kind: 'answer', status: this.status, ...this.answer.take(), ...this.kept });
    else if (message < 0) {
      // SecureSocket keeps a failed handshake's reason (a certificate no CA of the app verifies) to itself.
      const why = this.status > 0 ? 'connection closed before the answer was complete'
        : 'connection failed or closed' + (this.secure ? ' (https: is the CA of the server among the app\'s resources?)' : '');
      this.fail(why, this.reached);
    }
    return undefined;
  }

  private header(name: string, value: string): void {
    keepHeader(this.kept, name, value);
    // Before a byte of the body: http.js sees the request closed and reads no further. A failure's
    // length does not matter: its first bytes are read.
    if (name === 'content-length' && !isFailureStatus(this.status) && !this.answer.expect(value)) this.fail(tooLarge(this.answer.bound), true);
  }

  /**
   * `count` bytes of the answer arrived: http.js counts what is read, so all of them are read, unless they
   * would outgrow the bound: then none is (a flooded socket offers more at once than an honest answer),
   * but for a failure, whose first bytes fill the bound.
   */
  private read(count: number): void {
    const answer = this.answer;
    if (!answer.fits(count)) {
      if (!isFailureStatus(this.status)) return this.fail(tooLarge(answer.bound), true);
      const piece = answer.room > 0 ? (this.request as SdkRequest).read(ArrayBuffer, answer.room) : undefined;
      if (piece !== undefined) answer.add(piece);
      this.cut = true;
      return this.finish({ kind: 'answer', status: this.status, ...answer.takePrefix(), ...this.kept });
    }
    const piece = (this.request as SdkRequest).read(ArrayBuffer, count);
    if (piece !== undefined) answer.add(piece);
  }

  /** The next piece of the body, at most `room` bytes; undefined once all of it was handed over. */
  private fragment(room: number): string | ArrayBuffer | undefined {
    const body = this.body;
    if (body === null || this.sent === this.bodyBytes) {
      this.body = null;
      this.written = true;
      return undefined;
    }
    const end = this.sent + Math.min(room, this.bodyBytes - this.sent);
    const piece = body.slice(this.sent, end);
    this.sent = end;
    this.handed = end === this.bodyBytes;
    return piece;
  }

  /** Closes the request unless http.js is finishing it; drops every reference. */
  protected release(ending: Ending): void {
    const request = this.request;
    this.request = null;
    this.body = null;
    if (ending.kind === 'answer' && !this.cut) return;
    try {
      request?.close();
    } catch {
      // Already closed by http.js: nothing is left to release.
    }
  }
}
