// The device's identity and network from its preference store (the SDK's Preference: NVS on the ESP32,
// the flash sector below littlefs on the Pico W, a JSON file on lin), which `feed-agent provision` writes
// beside one common image. A stored value wins over the build's mcconfig key of the same name, so that one
// image serves a fleet, and a new token needs no new build (docs/firmware.md, "A fleet"). The store is
// given: main and the Wi-Fi setup (wifi-join.ts) pass the SDK's, the tests a stand-in.

/** The preference domain, an NVS namespace on the ESP32: `feed-agent provision` writes this one. */
export const PREFERENCE_DOMAIN = 'feed-agent';
/**
 * The keys read from it, each over the build's key of that name: `feed-agent provision` writes these
 * (platforms/node/provision/identity.ts takes them from here).
 */
export const STORED_KEYS = ['publicKey', 'token', 'url', 'resources', 'ssid', 'password', 'ca', 'update'] as const;

export interface StoredConfig {
  /** The build's config with every stored key over it. */
  config: Record<string, unknown>;
  /** The keys the store gave, for the start line (names only: the token's value is never traced). */
  stored: string[];
  /** A store that could not be read (a corrupt NVS page): the build's values stand, and why is said once. */
  problem?: string;
}

/** What is read of the SDK's `preference` module. */
export interface PreferenceStore {
  get(domain: string, key: string): unknown;
}

export function withStoredIdentity(build: Record<string, unknown>, preference: PreferenceStore): StoredConfig {
  const config: Record<string, unknown> = {};
  for (const key in build) config[key] = build[key];
  const stored: string[] = [];
  for (let i = 0; i < STORED_KEYS.length; i++) {
    let value: unknown;
    try {
      value = preference.get(PREFERENCE_DOMAIN, STORED_KEYS[i]);
    } catch (e) {
      return { config: build, stored: [], problem: 'the preference store could not be read (' + String(e) + '): the build\'s settings stand' };
    }
    if (typeof value === 'string' && value !== '') {
      config[STORED_KEYS[i]] = value;
      stored.push(STORED_KEYS[i]);
    }
  }
  return { config, stored };
}
