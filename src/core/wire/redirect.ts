// Where a redirect points, resolved as RFC 3986 §5 resolves a reference, without the URL global (XS has
// none on the device): the client follows a 307 or 308 only to the origin it was given, so the token
// never goes anywhere else. The regular expressions are written inside the functions (see retry-after.ts).

/** At most this many redirects are followed for one request; a chain of more is reported, not followed. */
export const MAX_REDIRECTS = 3;

/**
 * `location` resolved against `from` (an absolute http(s) URL), as an absolute URL; null when it points
 * to another origin (scheme, host or port), carries credentials, or is not a URL the client can send.
 */
export function sameOriginTarget(from: string, location: string): string | null {
  const base = split(from);
  // Whitespace, control characters and a backslash have no place in a URL a server means.
  if (base === null || /[\u0000-\u0020\u007f\\]/.test(location)) return null;
  const ref = location.replace(/#.*$/, '');
  let target: string;
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(ref)) target = ref;
  else if (ref.slice(0, 2) === '//') target = base.scheme + ':' + ref;
  else if (ref.charAt(0) === '/') target = base.origin + ref;
  else if (ref === '') target = base.origin + base.path + base.query;
  else if (ref.charAt(0) === '?') target = base.origin + base.path + ref;
  else target = base.origin + base.path.slice(0, base.path.lastIndexOf('/') + 1) + ref;
  const resolved = split(target);
  if (resolved === null || resolved.origin !== base.origin) return null;
  return resolved.origin + removeDots(resolved.path) + resolved.query;
}

interface Parts {
  scheme: string;
  /** `scheme://host[:port]`, lower case, without a default port. */
  origin: string;
  path: string;
  query: string;
}

function split(url: string): Parts | null {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(\?[^#]*)?/.exec(url);
  if (m === null) return null;
  const scheme = m[1].toLowerCase();
  let authority = m[2].toLowerCase();
  if ((scheme !== 'http' && scheme !== 'https') || authority === '' || authority.indexOf('@') >= 0) return null;
  const port = /:(\d*)$/.exec(authority);
  // An IPv6 literal holds colons: only a colon after its `]` starts a port.
  if (port !== null && authority.lastIndexOf(']') < port.index) {
    const number = port[1] === '' ? (scheme === 'https' ? 443 : 80) : Number(port[1]);
    authority = authority.slice(0, port.index) + (number === (scheme === 'https' ? 443 : 80) ? '' : ':' + number);
  }
  return { scheme, origin: scheme + '://' + authority, path: m[3] === '' ? '/' : m[3], query: m[4] ?? '' };
}

/** RFC 3986 §5.2.4: `.` and `..` segments taken out of a path. */
function removeDots(path: string): string {
  const out: string[] = [];
  const segments = path.split('/');
  for (let i = 1; i < segments.length; i++) {
    const s = segments[i];
    const last = i === segments.length - 1;
    if (s === '..') {
      if (out.length > 0) out.pop();
      if (last) out.push('');
    } else if (s === '.') {
      if (last) out.push('');
    } else {
      out.push(s);
    }
  }
  return '/' + out.join('/');
}
