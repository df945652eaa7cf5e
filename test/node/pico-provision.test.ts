// Provisioning the Pico W: the preference sectors for an identity, in a UF2 file, read back as the chip
// would: the UF2's blocks by the RP2040 boot ROM's rules (test/support/uf2-blocks.ts), the flash they leave
// by the Moddable SDK's Preference.get, step for step (support/mod-preference.ts). The firmware reading
// them on the emulated chip is test/firmware/pico.test.ts.
import { describe, expect, it } from 'vitest';
import { checkIdentity } from '../../platforms/node/provision/identity';
import type { Identity } from '../../platforms/node/provision/identity';
import { PICO_PREFERENCES_ADDRESS, picoPreferenceProblems, picoPreferenceSectors } from '../../platforms/node/provision/pico-preferences';
import { RP2040_FAMILY, uf2File } from '../../platforms/node/provision/uf2';
import { uf2Blocks } from '../support/uf2-blocks';
import { preferenceGet } from './support/mod-preference';

const KEY = '3C71BF5A9E02D4F86A1C7B30';
const TOKEN = '9F4E1A7C2B5D8E3F60A1C4D7';
const FLASH = 0x10000000;
const ALL: Identity = { publicKey: KEY, token: TOKEN, url: 'http://10.0.2.100:8080', ssid: 'Grünhaus', password: 'correct horse', ca: 'ca.der', update: 'http://10.0.2.100:8080/firmware' };
/** The Pico W's flash, as a board that ran before holds it: an image, and preferences of its own. */
function usedFlash(): Uint8Array {
  const flash = new Uint8Array(2 * 1024 * 1024).fill(0xff);
  flash.fill(0x5a, 0, 0x1000);
  return flash;
}

/** The flash after the boot ROM wrote the UF2's blocks. */
function written(flash: Uint8Array, file: Uint8Array): Uint8Array {
  const { blocks, ignored } = uf2Blocks(file);
  expect(ignored).toBe(0);
  for (const block of blocks) flash.set(block.data, block.address - FLASH);
  return flash;
}

describe('picoPreferenceSectors', () => {
  it('holds every field as a string in the firmware\'s domain, as Preference.get reads them', () => {
    const flash = written(usedFlash(), uf2File(PICO_PREFERENCES_ADDRESS, picoPreferenceSectors(ALL)));
    for (const [field, value] of Object.entries(ALL)) expect(preferenceGet(flash, 'feed-agent', field), field).toBe(value);
    // What the identity leaves out, and other domains, are not there.
    expect(preferenceGet(flash, 'feed-agent', 'colour')).toBeUndefined();
    expect(preferenceGet(flash, 'other', 'token')).toBeUndefined();
    const some = written(usedFlash(), uf2File(PICO_PREFERENCES_ADDRESS, picoPreferenceSectors({ publicKey: KEY, token: TOKEN, url: 'http://a', ssid: '' })));
    expect(['publicKey', 'token', 'url', 'ssid', 'password', 'ca', 'update'].map((f) => preferenceGet(some, 'feed-agent', f))).toEqual([KEY, TOKEN, 'http://a', undefined, undefined, undefined, undefined]);
  });

  it('lays out the SDK\'s format: the magic, then domain, key, type 3 and the string, each record padded with zeros to 4 bytes; the rest erased', () => {
    const sectors = picoPreferenceSectors({ publicKey: KEY, token: TOKEN, url: 'http://a' });
    expect(sectors.length).toBe(8192);
    const text = (s: string) => [...Buffer.from(s, 'latin1')];
    // "feed-agent\0publicKey\0" (21) + type + 24 digits and NUL = 47, padded to 48; 17 + 1 + 25 = 43, to 44; 15 + 1 + 9 = 25, to 28.
    const records = [
      ...text('feed-agent\0publicKey\0'), 3, ...text(KEY + '\0'), 0,
      ...text('feed-agent\0token\0'), 3, ...text(TOKEN + '\0'), 0,
      ...text('feed-agent\0url\0'), 3, ...text('http://a\0'), 0, 0, 0,
    ];
    expect([...sectors.subarray(0, 4 + records.length)]).toEqual([0x41, 0x31, 0x21, 0x81, ...records]);
    expect(records.length % 4).toBe(0);
    expect(sectors.subarray(4 + records.length).every((b) => b === 0xff)).toBe(true);
  });

  it('replaces what the device stored before, in either sector: an old token is nowhere in flash', () => {
    const OLD = 'A0A0A0A0A0A0A0A0A0A0A0A0';
    for (const sector of [0, 1]) {
      // The SDK compacts into the other sector and zeroes the first's magic: the old store may be in either.
      const flash = usedFlash();
      const old = picoPreferenceSectors({ publicKey: KEY, token: OLD, url: 'http://old' }).subarray(0, 4096);
      flash.set(old, PICO_PREFERENCES_ADDRESS - FLASH + sector * 4096);
      expect(preferenceGet(flash, 'feed-agent', 'token')).toBe(OLD);
      written(flash, uf2File(PICO_PREFERENCES_ADDRESS, picoPreferenceSectors(ALL)));
      expect(preferenceGet(flash, 'feed-agent', 'token')).toBe(TOKEN);
      expect(Buffer.from(flash).includes(OLD)).toBe(false);
      // The image below is as it was.
      expect(flash.subarray(0, 0x1000).every((b) => b === 0x5a)).toBe(true);
    }
  });

  it('takes a value of 62 bytes, the most Preference.get reads back whole, counting UTF-8 bytes', () => {
    const url = 'http://' + 'h'.repeat(55);
    const ssid = 'é'.repeat(16);
    expect(url.length).toBe(62);
    const flash = written(usedFlash(), uf2File(PICO_PREFERENCES_ADDRESS, picoPreferenceSectors({ publicKey: KEY, token: TOKEN, url, ssid })));
    expect(preferenceGet(flash, 'feed-agent', 'url')).toBe(url);
    expect(preferenceGet(flash, 'feed-agent', 'ssid')).toBe(ssid);
  });

  it('names each field over the SDK\'s limit on a line of its own, and writes nothing for it; a secret\'s value is never in one', () => {
    const password = 'p'.repeat(63);
    const checked = checkIdentity({ publicKey: KEY, token: TOKEN, url: 'http://' + 'h'.repeat(63), ssid: 'Barn', password });
    // 63 characters are a valid WPA2 passphrase, and too long for the Pico W.
    expect(checked.problems).toBeUndefined();
    const { identity } = checked as { identity: Identity };
    const problems = ['url: 70 bytes, at most 62 on the Pico W', 'password: 63 bytes, at most 62 on the Pico W'];
    expect(picoPreferenceProblems(identity)).toEqual(problems);
    expect(() => picoPreferenceSectors(identity)).toThrow(new RangeError(problems.join('\n')));
    expect(picoPreferenceProblems({ publicKey: KEY, token: TOKEN, url: 'http://a', ca: 'a\0.der' })).toEqual(['ca: contains a NUL character, which the Pico W\'s preferences cannot hold']);
    expect(picoPreferenceProblems(ALL)).toEqual([]);
  });
});

describe('uf2File', () => {
  it('writes the two sectors at their address in 32 blocks of one page each, RP2040 family, numbered in order', () => {
    const sectors = picoPreferenceSectors(ALL);
    const file = uf2File(PICO_PREFERENCES_ADDRESS, sectors);
    expect(file.length).toBe(32 * 512);
    const { blocks, ignored } = uf2Blocks(file);
    expect(ignored).toBe(0);
    expect(blocks.map((b) => [b.address, b.blockNo, b.numBlocks])).toEqual(Array.from({ length: 32 }, (_, i) => [PICO_PREFERENCES_ADDRESS + i * 256, i, 32]));
    expect(Buffer.concat(blocks.map((b) => b.data))).toEqual(Buffer.from(sectors));
    const view = new DataView(file.buffer);
    expect([view.getUint32(8, true), view.getUint32(28, true)]).toEqual([0x2000, RP2040_FAMILY]);
    // The rest of each block's 476-byte data area is zeros.
    for (let at = 0; at < file.length; at += 512) expect(file.subarray(at + 32 + 256, at + 508).every((b) => b === 0)).toBe(true);
  });

  it('refuses bytes that are not whole pages at a page boundary', () => {
    expect(() => uf2File(PICO_PREFERENCES_ADDRESS + 4, new Uint8Array(256))).toThrow('UF2: 256 bytes at 0x101f8004: expected whole pages of 256 bytes at a page boundary');
    expect(() => uf2File(PICO_PREFERENCES_ADDRESS, new Uint8Array(100))).toThrow(RangeError);
    expect(() => uf2File(PICO_PREFERENCES_ADDRESS, new Uint8Array(0))).toThrow(RangeError);
  });
});
