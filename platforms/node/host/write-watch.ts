// Which requests undici began to write, told by an interceptor on the host's dispatcher (undici's public
// `compose`). A request it never began (a name that did not resolve, a refused or never-finished
// connection, a TLS handshake that failed or stalls) cannot have reached the server, whatever the error
// or the deadline that ended it: it was not delivered. undici begins a request (`onRequestStart`) just
// before it writes the request's first byte on a connection that is open.
import type { Dispatcher } from 'undici';

type Handler = Dispatcher.DispatchHandler;

export class WriteWatch {
  /** The dispatcher to make requests through: the one given, watched. */
  readonly dispatcher: Dispatcher;
  // Keyed by each request's own AbortSignal: a fresh object per request, forgotten with it.
  private readonly begun = new WeakSet<AbortSignal>();

  constructor(base: Dispatcher) {
    this.dispatcher = base.compose((dispatch) => (opts, handler) => {
      // A request's options reach the dispatcher whole: its signal too, which DispatchOptions does not declare.
      const signal = (opts as { signal?: unknown }).signal;
      if (!(signal instanceof AbortSignal)) return dispatch(opts, handler);
      return dispatch(opts, new Watched(handler, () => this.begun.add(signal)));
    });
  }

  /** Whether undici began to write the request made with `signal`. */
  began(signal: AbortSignal): boolean {
    return this.begun.has(signal);
  }
}

/** Passes every event on to the request's own handler, and tells `begin` of the first. */
class Watched implements Handler {
  constructor(
    private readonly handler: Handler,
    private readonly begin: () => void,
  ) {}

  onRequestStart(...args: Parameters<NonNullable<Handler['onRequestStart']>>): void {
    this.begin();
    this.handler.onRequestStart?.(...args);
  }

  onRequestUpgrade(...args: Parameters<NonNullable<Handler['onRequestUpgrade']>>): void {
    this.handler.onRequestUpgrade?.(...args);
  }

  onResponseStart(...args: Parameters<NonNullable<Handler['onResponseStart']>>): void {
    this.handler.onResponseStart?.(...args);
  }

  onResponseData(...args: Parameters<NonNullable<Handler['onResponseData']>>): void {
    this.handler.onResponseData?.(...args);
  }

  onResponseEnd(...args: Parameters<NonNullable<Handler['onResponseEnd']>>): void {
    this.handler.onResponseEnd?.(...args);
  }

  onResponseError(...args: Parameters<NonNullable<Handler['onResponseError']>>): void {
    this.handler.onResponseError?.(...args);
  }
}
