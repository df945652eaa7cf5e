// UTF-8 for the queue's string pool. TextEncoder/TextDecoder are host globals, not ECMAScript, and the core
// uses none: this is the small part of them it needs. The pool is a ring: writes and reads wrap at its end.

// On XS, `s.charCodeAt(i)` and `s.length` on a primitive string allocate a wrapper object each time;
// `charCodeAt.call(s, i)` does not, and its NaN past the end replaces `length`: queuing a string allocates
// nothing either.
const charCodeAt = String.prototype.charCodeAt;

/** The bytes `s` takes as UTF-8. A lone surrogate counts as U+FFFD (3 bytes), as TextEncoder writes it. */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0, c = charCodeAt.call(s, 0); c === c; c = charCodeAt.call(s, ++i)) {
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && isLowSurrogate(charCodeAt.call(s, i + 1))) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/**
 * The bytes a sample's value takes in the string pool: a string's UTF-8 length, none for a number or a
 * boolean. Measured once, where a sample comes in, and handed on with it (queue.ts, `push`).
 */
export function poolBytes(value: unknown): number {
  return typeof value === 'string' ? utf8Length(value) : 0;
}

/**
 * Writes `s` as UTF-8 into `ring` from index `at`, wrapping at the ring's end; the caller has checked that
 * `utf8Length(s)` bytes are free there. Lone surrogates become U+FFFD. Returns true when every byte is
 * ASCII: `asciiRead` can then decode them.
 */
export function utf8Write(s: string, ring: Uint8Array, at: number): boolean {
  let p = at;
  let ascii = true;
  for (let i = 0, c = charCodeAt.call(s, 0); c === c; c = charCodeAt.call(s, ++i)) {
    if (c < 0x80) {
      p = put(ring, p, c);
      continue;
    }
    ascii = false;
    if (c >= 0xd800 && c <= 0xdfff) {
      const d = charCodeAt.call(s, i + 1);
      if (c <= 0xdbff && isLowSurrogate(d)) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      } else c = 0xfffd;
    }
    if (c < 0x800) p = put(ring, p, 0xc0 | (c >> 6));
    else if (c < 0x10000) {
      p = put(ring, p, 0xe0 | (c >> 12));
      p = put(ring, p, 0x80 | ((c >> 6) & 0x3f));
    } else {
      p = put(ring, p, 0xf0 | (c >> 18));
      p = put(ring, p, 0x80 | ((c >> 12) & 0x3f));
      p = put(ring, p, 0x80 | ((c >> 6) & 0x3f));
    }
    p = put(ring, p, 0x80 | (c & 0x3f));
  }
  return ascii;
}

// Characters gathered before they join the result: repeated `+=` of single characters copies the whole
// string each time on XS (quadratic), while short pieces keep the copying close to linear.
const PIECE = 64;

/** Decodes `length` bytes of UTF-8 that `utf8Write` put in `ring` from index `at` (wrapping). */
export function utf8Read(ring: Uint8Array, at: number, length: number): string {
  let text = '';
  let piece = '';
  let pieceChars = 0;
  let p = at;
  for (let n = 0; n < length; n++) {
    let c = ring[p];
    p = step(ring, p);
    if (c >= 0x80) {
      // The lead byte says how many continuation bytes follow.
      let more = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
      c &= 0x3f >> more;
      n += more;
      for (; more > 0; more--) {
        c = (c << 6) | (ring[p] & 0x3f);
        p = step(ring, p);
      }
    }
    if (c < 0x10000) piece += String.fromCharCode(c);
    else piece += String.fromCharCode(0xd800 + ((c - 0x10000) >> 10), 0xdc00 + ((c - 0x10000) & 0x3ff));
    if (++pieceChars === PIECE) {
      text += piece;
      piece = '';
      pieceChars = 0;
    }
  }
  return text + piece;
}

// Bytes per String.fromCharCode call: its arguments go on the XS stack, which is small on a device.
const CHUNK = 64;

/**
 * Decodes `length` bytes that are all ASCII from `ring` at index `at` (wrapping): one native call per
 * CHUNK bytes instead of a loop turn per byte.
 */
export function asciiRead(ring: Uint8Array, at: number, length: number): string {
  let text = '';
  let p = at;
  for (let left = length; left > 0; ) {
    let n = left < CHUNK ? left : CHUNK;
    if (n > ring.length - p) n = ring.length - p;
    // apply takes any array-like; TypeScript's signature wants an array.
    text += String.fromCharCode.apply(null, ring.subarray(p, p + n) as unknown as number[]);
    p += n;
    if (p === ring.length) p = 0;
    left -= n;
  }
  return text;
}

function isLowSurrogate(c: number): boolean {
  // NaN past the end of the string compares false.
  return c >= 0xdc00 && c <= 0xdfff;
}

function put(ring: Uint8Array, p: number, byte: number): number {
  ring[p] = byte;
  return step(ring, p);
}

function step(ring: Uint8Array, p: number): number {
  return p + 1 === ring.length ? 0 : p + 1;
}
