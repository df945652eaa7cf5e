// How a call to the service failed, in one type the uplink can decide on: retry later, set a batch's
// element aside, or wait for a new token. Messages never carry the token: whoever builds a FeedError
// from text that could hold it (a server message, a host's network message) passes it through `redact`.

export type FeedErrorKind = 'network' | 'timeout' | 'http' | 'protocol';

/** The optional parts of a FeedError; each absent part takes the "unknown" value of its field. */
export interface FeedErrorDetails {
  status?: number;
  retryAfterMs?: number;
  maybeDelivered?: boolean;
  elementIndex?: number;
  location?: string;
}

export class FeedError extends Error {
  /** What failed: the connection, the timer, the service (a non-2xx status), or the answer's form. */
  readonly kind: FeedErrorKind;
  /** HTTP status for 'http' (and for 'protocol' when an answer came with a status), else 0. */
  readonly status: number;
  /** Whether the same request may succeed later: network, timeout, protocol, 408, 429 and 5xx. */
  readonly retryable: boolean;
  /** `Retry-After` in ms (a date is measured from the answer's own `Date`: retry-after.ts), or -1. */
  readonly retryAfterMs: number;
  /**
   * Whether the request may have taken effect: as the host reported for network and timeout; true for
   * a protocol error (a 2xx answer came, so the service may have stored the batch); false for 'http'.
   */
  readonly maybeDelivered: boolean;
  /** Operation 4 only: the request index of the first bad element a 4xx message names, else -1. */
  readonly elementIndex: number;
  /** A redirect the client did not follow (3xx): its `Location`, free of the token; '' otherwise. */
  readonly location: string;

  /** `message` must already be free of the token (see `redact`). */
  constructor(kind: FeedErrorKind, message: string, details?: FeedErrorDetails) {
    super(message);
    const status = details?.status ?? 0;
    this.kind = kind;
    this.status = status;
    this.retryable = kind !== 'http' || status === 408 || status === 429 || status >= 500;
    this.retryAfterMs = details?.retryAfterMs ?? -1;
    this.maybeDelivered = details?.maybeDelivered ?? false;
    this.elementIndex = details?.elementIndex ?? -1;
    this.location = details?.location ?? '';
  }

  // A getter on the prototype, not an assignment: on a Moddable build Error.prototype is frozen, and
  // assigning an inherited read-only `name` throws (documentation/xs/preload.md). One slot for all
  // errors, read before any stack trace is taken, so `String(e)` and `e.stack` start with "FeedError:".
  override get name(): string {
    return 'FeedError';
  }
}

/** What a thrown value says: an Error's message, else the value as text. */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The token was refused (401 or 403): retrying with the same token will not help. */
export function isAuthError(e: unknown): boolean {
  return e instanceof FeedError && e.kind === 'http' && (e.status === 401 || e.status === 403);
}

// The regular expressions are written inside the functions that use them, never at module level: on a
// Moddable build a module-level one is preloaded into flash, and XS 8.2.3 crashes when a garbage
// collection runs during its exec (docs/moddable.md). Evaluated in a function, each is a RAM object.

/** The element index an operation-4 failure message names, or -1. */
export function elementIndexOf(message: string): number {
  // Operation 4's refusals name the first bad element: `element 3: resource 99 not found`.
  const match = /\belement (\d+):/.exec(message);
  return match === null ? -1 : Number(match[1]);
}

// A secret shorter than this may be a piece of ordinary words ("a" of "command"): it is taken out only
// where it stands alone. A longer one is taken out wherever it is, glued to letters too (`token%3D…`,
// an escaped `\n…`), as it is no word's piece by chance.
const STANDS_ALONE_BELOW = 8;

/**
 * `text` with `secret`, and any `Bearer <credential>`, replaced by a marker: every occurrence of a secret
 * of 8 characters or more, and of a shorter one each that no letter or digit adjoins.
 */
export function redact(text: string, secret: string | undefined): string {
  const out = secret ? withoutSecret(text, secret) : text;
  // Any bearer credential (RFC 6750 token syntax), whatever token it carries: a proxy may echo a header
  // we never sent.
  return out.replace(/\bBearer\s+[A-Za-z0-9\-._~+/]+=*/gi, 'Bearer [redacted]');
}

function withoutSecret(text: string, secret: string): string {
  const anywhere = secret.length >= STANDS_ALONE_BELOW;
  let out = '';
  let from = 0;
  for (let at = text.indexOf(secret); at !== -1; at = text.indexOf(secret, at + 1)) {
    if (at < from) continue;
    if (!anywhere && (isLetterOrDigit(text.charCodeAt(at - 1)) || isLetterOrDigit(text.charCodeAt(at + secret.length)))) continue;
    out += text.slice(from, at) + '[redacted]';
    from = at + secret.length;
  }
  return out + text.slice(from);
}

/** An ASCII letter or digit (NaN, past either end of the text, is neither). */
function isLetterOrDigit(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}
