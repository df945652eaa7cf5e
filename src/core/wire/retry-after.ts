// `Retry-After` as a wait, in both of its forms (RFC 9110 §10.2.3): delta-seconds, or an HTTP-date. A date
// is turned into a wait by subtracting the answer's own `Date` header, so the device needs no wall clock
// and a service whose clock is far off (1970, 2100) still gets the wait it asked for. Date.parse is not
// used: which formats it accepts is the engine's choice (XS on the device), so the three forms HTTP
// allows are read here.
//
// The regular expressions are written inside the functions, never at module level: on a Moddable build a
// module-level one is preloaded into flash, and XS 8.2.3 crashes when a garbage collection runs during its
// exec (docs/moddable.md).

const MONTHS = 'JanFebMarAprMayJunJulAugSepOctNovDec';

/**
 * The wait a raw `Retry-After` asks for, in ms, or -1 (absent, junk, or a date without a `Date` to
 * measure it from). Dates are whole seconds: the service's clock read somewhere in the second its `Date`
 * names, so the Retry-After date minus that second is the shortest wait that is never too early.
 */
export function parseRetryAfter(value: string | null, date: string | null = null): number {
  if (value === null) return -1;
  // Up to 9 digits (about 31 years): a longer value is junk, not a wait.
  const seconds = /^\s*(\d{1,9})\s*$/.exec(value);
  if (seconds !== null) return Number(seconds[1]) * 1000;
  const until = parseHttpDate(value);
  const from = date === null ? NaN : parseHttpDate(date);
  if (isNaN(until) || isNaN(from)) return -1;
  return Math.max(0, until - from);
}

/**
 * An HTTP-date as ms since the epoch, or NaN: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), and the
 * obsolete RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`) forms.
 * The weekday is not checked. A two-digit year is 19xx from 70 on, else 20xx: without a clock the
 * rule "not more than 50 years ahead" cannot be applied, and both dates of an answer read alike.
 */
export function parseHttpDate(text: string): number {
  let m = /^\s*[A-Za-z]{3},\s+(\d{1,2})\s+([A-Za-z]{3})\s+(\d{4})\s+(\d\d):(\d\d):(\d\d)\s+GMT\s*$/.exec(text);
  if (m !== null) return utc(Number(m[3]), m[2], m[1], m[4], m[5], m[6]);
  m = /^\s*[A-Za-z]{6,9},\s+(\d\d)-([A-Za-z]{3})-(\d\d)\s+(\d\d):(\d\d):(\d\d)\s+GMT\s*$/.exec(text);
  if (m !== null) {
    const yy = Number(m[3]);
    return utc(yy >= 70 ? 1900 + yy : 2000 + yy, m[2], m[1], m[4], m[5], m[6]);
  }
  m = /^\s*[A-Za-z]{3}\s+([A-Za-z]{3})\s+(\d{1,2})\s+(\d\d):(\d\d):(\d\d)\s+(\d{4})\s*$/.exec(text);
  if (m !== null) return utc(Number(m[6]), m[1], m[2], m[3], m[4], m[5]);
  return NaN;
}

function utc(year: number, month: string, day: string, hour: string, minute: string, second: string): number {
  const index = MONTHS.indexOf(month.charAt(0).toUpperCase() + month.slice(1).toLowerCase());
  const d = Number(day), h = Number(hour), min = Number(minute), s = Number(second);
  // A leap second (60) is allowed by the grammar; Date.UTC rolls it over into the next minute.
  if (index < 0 || index % 3 !== 0 || d < 1 || d > 31 || h > 23 || min > 59 || s > 60) return NaN;
  return Date.UTC(year, index / 3, d, h, min, s);
}
