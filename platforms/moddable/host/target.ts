// Where a request goes and how it is secured: both HTTP hosts (http.ts, keep-alive.ts) take a URL apart
// the same way, send the path with its query, and give SecureSocket the same TLS dictionary.

export interface Target {
  secure: boolean;
  host: string;
  port: number;
  /** Path and query, '/' when the URL has none. */
  path: string;
}

/** The parts of an http or https URL, or null for anything else. */
export function targetOf(url: string): Target | null {
  // In the function, not at module level: a preloaded RegExp crashes XS 8.2.3 (src/core/wire/errors.ts).
  const parts = /^(https?):\/\/([^/?#:]+)(?::(\d+))?([^#]*)$/.exec(url);
  if (parts === null) return null;
  const secure = parts[1] === 'https';
  return { secure, host: parts[2], port: parts[3] !== undefined ? Number(parts[3]) : secure ? 443 : 80, path: parts[4] === '' ? '/' : parts[4] };
}

/** Why an https URL fails at once on an SDK without SecureSocket. */
export const NO_TLS = 'https needs SecureSocket (include $(MODULES)/crypt/tls.json)';

const TLS_1_2 = 0x303;

/**
 * SecureSocket's `secure` dictionary: TLS 1.2 and the app's options (a CA `certificate`). One per host:
 * SecureSocket copies it and changes nothing in it.
 */
export function tlsDictionary(secure?: Record<string, unknown>): Record<string, unknown> {
  return { protocolVersion: TLS_1_2, ...secure };
}
