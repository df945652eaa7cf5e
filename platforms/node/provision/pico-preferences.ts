// The Pico W's preference store as the Moddable SDK keeps it in flash (modules/files/preference/esp/
// modPreference.c, which the SDK's pico platform builds): two 4 KB sectors from _MODPREF_start; the one in
// use begins with a magic word, then records "domain\0key\0" type value, each padded with zeros to 4
// bytes, and the rest of the sector erased (0xff, where the SDK's reader stops). Preference.get reads a
// record's value through a 64-byte buffer: its type byte, the string and its NUL must fit in it.
import { IDENTITY_FIELDS, PREFERENCE_DOMAIN } from './identity';
import type { Identity } from './identity';

/** Where the SDK's preferences start in the Pico W's flash (build/devices/pico/config/xsproj_rp2040.ld). */
export const PICO_PREFERENCES_ADDRESS = 0x101f8000;
const SECTOR = 4096;
const MAGIC = 0x81213141;
/** kPrefsTypeString (modPreference.h). */
const TYPE_STRING = 3;
/**
 * A string's bytes, NUL excluded: modPreferenceSet refuses more than 63 with the NUL, and xs_preference_get
 * reads the type byte, the string and its NUL into 64 bytes, so a longer one would come back cut or unended.
 */
const PICO_VALUE_BYTES = 62;
const UTF8 = new TextEncoder();

/** One line for each of the identity's values that the Pico W's store cannot hold (none: []). */
export function picoPreferenceProblems(identity: Identity): string[] {
  const problems: string[] = [];
  for (const [field, value] of fields(identity)) {
    const bytes = UTF8.encode(value).length;
    // The store's strings end at their first NUL: the firmware would read a shorter value than was given.
    if (value.includes('\0')) problems.push(field + ': contains a NUL character, which the Pico W\'s preferences cannot hold');
    else if (bytes > PICO_VALUE_BYTES) problems.push(field + ': ' + bytes + ' bytes, at most ' + PICO_VALUE_BYTES + ' on the Pico W');
  }
  return problems;
}

/**
 * The two preference sectors (8 KB, for PICO_PREFERENCES_ADDRESS) holding `identity` as strings in the
 * firmware's domain: the first in use, the second erased, so that whatever the device stored before
 * (an old token in either sector) is gone. Throws a RangeError of picoPreferenceProblems' lines.
 */
export function picoPreferenceSectors(identity: Identity): Uint8Array {
  const problems = picoPreferenceProblems(identity);
  if (problems.length > 0) throw new RangeError(problems.join('\n'));
  const sectors = new Uint8Array(2 * SECTOR).fill(0xff);
  new DataView(sectors.buffer).setUint32(0, MAGIC, true);
  let at = 4;
  for (const [field, value] of fields(identity)) {
    const text = UTF8.encode(PREFERENCE_DOMAIN + '\0' + field + '\0');
    const data = UTF8.encode(value + '\0');
    // At most 7 records of 88 bytes: far within the sector.
    const size = (text.length + 1 + data.length + 3) & ~3;
    sectors.fill(0, at, at + size);
    sectors.set(text, at);
    sectors[at + text.length] = TYPE_STRING;
    sectors.set(data, at + text.length + 1);
    at += size;
  }
  return sectors;
}

/** The identity's fields that have a value, in the order of IDENTITY_FIELDS ('' is none, as the firmware reads it). */
function fields(identity: Identity): [string, string][] {
  return IDENTITY_FIELDS.flatMap((field) => {
    const value = identity[field];
    return value === undefined || value === '' ? [] : [[field, value] as [string, string]];
  });
}
