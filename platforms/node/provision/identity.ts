// A device's identity and network, as `feed-agent provision` writes them to the device's preference store
// (the firmware reads them at boot, docs/firmware.md, "A fleet"). Every problem is one line that names the
// field; a token's value never appears in one.

import { PREFERENCE_DOMAIN, STORED_KEYS } from '../../moddable/firmware/stored-identity';

/** The preference domain (an NVS namespace on the ESP32) the firmware reads, and the keys it reads there: the firmware's own. */
export { PREFERENCE_DOMAIN };

/** The fields, by the preference key each is stored under (NVS keys are at most 15 bytes). */
export interface Identity {
  publicKey: string;
  token: string;
  /** The service; without it, the build's `url`. */
  url?: string;
  /** Wi-Fi network and passphrase; absent on a board with Ethernet. */
  ssid?: string;
  password?: string;
  /**
   * The device's resource ids by role (`uptime:201,heap:202,command:204`), the firmware's `resources` key:
   * ids belong to one device, so a fleet's image cannot carry them.
   */
  resources?: string;
  /** The name of the DER resource of the CA that signed the service's chain (an https url). */
  ca?: string;
  /** Where the device looks for a firmware update (`feed-agent serve --firmware DIR` serves /firmware). */
  update?: string;
}

export const IDENTITY_FIELDS = STORED_KEYS;
export type IdentityField = (typeof IDENTITY_FIELDS)[number];
/** What differs from board to board; the rest may come from the build's keys (a fleet's one url). */
const REQUIRED: readonly IdentityField[] = ['publicKey', 'token'];

/** The platform issues a device's public key and its token as 24 hexadecimal digits (12 bytes). */
const KEY = /^[0-9A-Fa-f]{24}$/;
const HTTP_URL = /^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/;
/** 802.11: an SSID is 1 to 32 bytes; WPA2 takes a passphrase of 8 to 63 characters. */
const SSID_BYTES = 32;
const UTF8 = new TextEncoder();

export type Checked = { identity: Identity; problems?: undefined } | { problems: string[] };

/** Checks the fields given (strings; '' or absent for an optional field left out). */
export function checkIdentity(fields: Partial<Record<string, string>>): Checked {
  const problems: string[] = [];
  for (const name of Object.keys(fields)) {
    if (!(IDENTITY_FIELDS as readonly string[]).includes(name)) problems.push(name + ': not a field (fields: ' + IDENTITY_FIELDS.join(', ') + ')');
  }
  const value = (name: IdentityField): string | undefined => {
    const v = fields[name];
    return v === undefined || v === '' ? undefined : v;
  };
  for (const name of REQUIRED) if (value(name) === undefined) problems.push(name + ': missing');
  const key = (name: 'publicKey' | 'token', v: string | undefined): void => {
    if (v === undefined || KEY.test(v)) return;
    const what = /^[0-9A-Fa-f]*$/.test(v) ? v.length + ' hexadecimal digits' : 'a character that is not a hexadecimal digit';
    // The token's own characters are never repeated.
    problems.push(name + ': expected 24 hexadecimal digits, got ' + what + (name === 'publicKey' ? ' ("' + v + '")' : ''));
  };
  key('publicKey', value('publicKey'));
  key('token', value('token'));
  const url = value('url');
  if (url !== undefined && !HTTP_URL.test(url)) problems.push('url: expected http(s)://host[:port][/path], without query or fragment, got "' + url + '"');
  const update = value('update');
  if (update !== undefined && !HTTP_URL.test(update)) problems.push('update: expected http(s)://host[:port][/path], got "' + update + '"');
  const ssid = value('ssid');
  if (ssid !== undefined && UTF8.encode(ssid).length > SSID_BYTES) problems.push('ssid: ' + UTF8.encode(ssid).length + ' bytes, at most ' + SSID_BYTES);
  const password = value('password');
  if (password !== undefined && ssid === undefined) problems.push('password: given without an ssid');
  if (password !== undefined && (password.length < 8 || password.length > 63)) problems.push('password: expected 8 to 63 characters (WPA2), got ' + password.length);
  const resources = value('resources');
  if (resources !== undefined && !/^[a-z]+:[1-9]\d*(,[a-z]+:[1-9]\d*)*$/.test(resources)) problems.push('resources: expected role:id pairs, e.g. uptime:201,heap:202,command:204, got "' + resources + '"');
  const ca = value('ca');
  if (ca !== undefined && !/^[\w.-]+\.der$/.test(ca)) problems.push('ca: expected the name of a .der resource, got "' + ca + '"');
  if (problems.length > 0) return { problems };
  const identity: Identity = { publicKey: value('publicKey')!, token: value('token')! };
  for (const name of ['url', 'resources', 'ssid', 'password', 'ca', 'update'] as const) {
    const v = value(name);
    if (v !== undefined) identity[name] = v;
  }
  return { identity };
}
