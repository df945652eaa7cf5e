// Reads an ESP-IDF NVS partition image's string entries back as ESP-IDF does: pages, entry states, and
// every CRC with zlib's crc32(data, 0xffffffff), as ESP-IDF's own NVS tool computes it. Each check is an
// expectation, so a test that reads an image fails where the image is wrong.
import { crc32 } from 'node:zlib';
import { expect } from 'vitest';

/** Reads an NVS image's strings as ESP-IDF does, checking every CRC on the way. */
export function readNvs(image: Uint8Array): Record<string, Record<string, string>> {
  const nvsCrc = (bytes: Uint8Array) => crc32(bytes, 0xffffffff) >>> 0;
  const u32 = (at: number) => new DataView(image.buffer, image.byteOffset).getUint32(at, true);
  const namespaces = new Map<number, string>();
  const out: Record<string, Record<string, string>> = {};
  for (let page = 0; page < image.length; page += 4096) {
    if (u32(page) === 0xffffffff) continue;
    expect(u32(page)).toBe(0xfffffffe);
    expect(image[page + 8]).toBe(0xfe);
    expect(u32(page + 28)).toBe(nvsCrc(image.subarray(page + 4, page + 28)));
    for (let i = 0; i < 126; ) {
      const state = (image[page + 32 + (i >> 2)] >> ((i & 3) * 2)) & 3;
      const at = page + 64 + i * 32;
      if (state === 3) break;
      expect(state).toBe(2);
      const entry = image.subarray(at, at + 32);
      expect(u32(at + 4)).toBe(nvsCrc(new Uint8Array([...entry.subarray(0, 4), ...entry.subarray(8)])));
      const key = Buffer.from(entry.subarray(8, 24)).toString('latin1').replace(/\0.*$/s, '');
      if (entry[0] === 0) namespaces.set(entry[24], key);
      else {
        expect(entry[1]).toBe(0x21);
        const size = entry[24] | (entry[25] << 8);
        const data = image.subarray(at + 32, at + 32 + size);
        expect(u32(at + 28)).toBe(nvsCrc(data));
        expect(data[size - 1]).toBe(0);
        (out[namespaces.get(entry[0])!] ??= {})[key] = Buffer.from(data.subarray(0, size - 1)).toString('utf8');
      }
      i += entry[2];
    }
  }
  return out;
}

