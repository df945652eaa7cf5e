// Preference.get as the Moddable SDK does it on the Pico (modules/files/preference/esp/modPreference.c:
// findPrefsBlock, findPrefOffset, getPrefSize, xs_preference_get), step for step over a flash image, with
// its 64-byte reads: a test reads what the firmware would. Where the C would read past its buffer (a
// string with no NUL within it), this throws.

const FLASH_START = 0x10000000;
const MODPREF_START = 0x101f8000;
const SECTOR = 4096;
const MAGIC = 0x81213141;
const BUFFER = 64;
const TYPE_BOOLEAN = 1;
const TYPE_INTEGER = 2;
const TYPE_STRING = 3;
const TYPE_BUFFER = 4;

export type PreferenceValue = boolean | number | string | Uint8Array;

/**
 * What Preference.get(domain, key) answers on a chip whose flash (from 0x10000000) is `flash`: undefined
 * where the key is not stored, 'reset' where neither sector has the magic (the SDK then erases both).
 */
export function preferenceGet(flash: Uint8Array, domain: string, key: string): PreferenceValue | undefined | 'reset' {
  const read = (offset: number, size: number): Uint8Array => {
    const bytes = new Uint8Array(size).fill(0xff);
    bytes.set(flash.subarray(offset, offset + size));
    return bytes;
  };
  const start = MODPREF_START - FLASH_START;
  const magic = (offset: number): number => new DataView(read(offset, 4).buffer).getUint32(0, true);
  let offset: number;
  if (magic(start) === MAGIC) offset = start;
  else if (magic(start + SECTOR) === MAGIC) offset = start + SECTOR;
  else return 'reset';
  const end = offset + SECTOR;
  offset += 4;
  while (offset < end) {
    let use = Math.min(BUFFER, end - offset);
    const head = read(offset, use);
    let b = 0;
    for (; use > 0; b++, use--, offset++) {
      if (head[b] === 0xff) return undefined;
      if (head[b] !== 0) break;
    }
    if (use === 0) continue;
    const storedDomain = cString(read(offset, BUFFER), 0);
    offset += storedDomain.length + 1;
    const storedKey = cString(read(offset, BUFFER), 0);
    offset += storedKey.length + 1;
    const value = read(offset, BUFFER);
    offset = (offset + prefSize(value) + 3) & ~3;
    if (storedDomain.text === domain && storedKey.text === key) return decode(value);
  }
  return undefined;
}

/** The C string at `at` in a 64-byte buffer, as c_strlen and c_strcmp see it (byte length and text). */
function cString(buffer: Uint8Array, at: number): { text: string; length: number } {
  const nul = buffer.indexOf(0, at);
  if (nul < 0) throw new Error('no NUL within the SDK\'s ' + BUFFER + '-byte buffer: the C would read past it');
  return { text: new TextDecoder('utf-8', { fatal: true }).decode(buffer.subarray(at, nul)), length: nul - at };
}

/** getPrefSize: the type byte and the value's bytes; an unknown type skips to the sector's end. */
function prefSize(pref: Uint8Array): number {
  switch (pref[0]) {
    case TYPE_BOOLEAN:
      return 2;
    case TYPE_INTEGER:
      return 5;
    case TYPE_STRING:
      return 1 + cString(pref, 1).length + 1;
    case TYPE_BUFFER:
      return 3 + (pref[1] | (pref[2] << 8));
  }
  return SECTOR;
}

/** xs_preference_get's answer from the 64 bytes read at the value. */
function decode(pref: Uint8Array): PreferenceValue | undefined {
  switch (pref[0]) {
    case TYPE_BOOLEAN:
      return pref[1] !== 0;
    case TYPE_INTEGER:
      return new DataView(pref.buffer, pref.byteOffset).getInt32(1, true);
    case TYPE_STRING:
      return cString(pref, 1).text;
    case TYPE_BUFFER:
      return pref.slice(3, 3 + (pref[1] | (pref[2] << 8)));
  }
  return undefined;
}
