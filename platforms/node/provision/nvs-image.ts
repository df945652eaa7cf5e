// An ESP-IDF NVS partition image (format version 2) holding string entries in one namespace: what
// `nvs_flash_init` on the device reads, and Moddable's `Preference.get(domain, key)` answers from. Written
// from the format as ESP-IDF documents and parses it (its nvs_partition_tool): 4 KB pages, each a 32-byte
// header, a 32-byte bitmap of entry states, and 126 entries of 32 bytes; a string is one entry that
// names it, then its bytes (NUL included) in the entries after it.
import { crc32 } from '../storage/crc32';

/** NVS's CRC: zlib's crc32(data, 0xffffffff), as ESP-IDF computes and checks it. */
const nvsCrc = (bytes: Uint8Array, start = 0, end = bytes.length): number => crc32(bytes, start, end, 0xffffffff);

const PAGE = 4096;
const ENTRY = 32;
const ENTRIES_PER_PAGE = 126;
const PAGE_ACTIVE = 0xfffffffe;
/** Format version 2 is stored as 0xfe (version 1: 0xff). */
const VERSION_2 = 0xfe;
const TYPE_U8 = 0x01;
const TYPE_STRING = 0x21;
/** A string's bytes are at most this long (ESP-IDF: 4000 for strings). */
const MAX_STRING = 4000;
const KEY_BYTES = 15;
const UTF8 = new TextEncoder();

/**
 * The image of a partition of `size` bytes (a multiple of 4 KB, at least two pages: NVS keeps one free)
 * with `entries` as strings in namespace `namespace`.
 */
export function nvsImage(namespace: string, entries: Record<string, string>, size: number): Uint8Array {
  if (size % PAGE !== 0 || size < 2 * PAGE) throw new RangeError('an NVS partition is a multiple of 4096 bytes, at least 8192: ' + size);
  const image = new Uint8Array(size).fill(0xff);
  const page = new PageWriter(image, 0);
  page.write(0, TYPE_U8, namespace, new Uint8Array([1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), []);
  for (const [key, text] of Object.entries(entries)) {
    const bytes = UTF8.encode(text + '\0');
    if (bytes.length > MAX_STRING) throw new RangeError('NVS entry ' + key + ': ' + bytes.length + ' bytes, at most ' + MAX_STRING);
    const chunks = Math.ceil(bytes.length / ENTRY);
    const head = new Uint8Array(8).fill(0xff);
    const view = new DataView(head.buffer);
    view.setUint16(0, bytes.length, true);
    view.setUint32(4, nvsCrc(bytes), true);
    page.write(1, TYPE_STRING, key, head, Array.from({ length: chunks }, (_, i) => bytes.subarray(i * ENTRY, (i + 1) * ENTRY)));
  }
  page.close();
  return image;
}

/** Fills one page; a provisioning image is a handful of short strings, far below a page's 126 entries. */
class PageWriter {
  private next = 0;

  constructor(
    private readonly image: Uint8Array,
    private readonly at: number,
  ) {}

  /** An item: its entry, then `data` in the entries after it (its span). */
  write(ns: number, type: number, key: string, data: Uint8Array, following: Uint8Array[]): void {
    const name = UTF8.encode(key);
    if (name.length === 0 || name.length > KEY_BYTES) throw new RangeError('NVS key "' + key + '": 1 to ' + KEY_BYTES + ' bytes');
    const span = 1 + following.length;
    if (this.next + span > ENTRIES_PER_PAGE) throw new RangeError('NVS image: more than one page of entries');
    const entry = new Uint8Array(ENTRY);
    entry.set([ns, type, span, 0xff]);
    entry.set(name, 8);
    entry.set(data, 24);
    new DataView(entry.buffer).setUint32(4, entryCrc(entry), true);
    this.put(entry);
    for (const chunk of following) {
      const raw = new Uint8Array(ENTRY).fill(0xff);
      raw.set(chunk);
      this.put(raw);
    }
  }

  /** The page's header: active, sequence 0, version 2, its CRC over bytes 4 to 28. */
  close(): void {
    const header = this.image.subarray(this.at, this.at + ENTRY);
    const view = new DataView(header.buffer, header.byteOffset, ENTRY);
    view.setUint32(0, PAGE_ACTIVE, true);
    view.setUint32(4, 0, true);
    header[8] = VERSION_2;
    view.setUint32(28, nvsCrc(header, 4, 28), true);
  }

  private put(entry: Uint8Array): void {
    const index = this.next++;
    this.image.set(entry, this.at + 2 * ENTRY + index * ENTRY);
    // Two bits per entry, lowest first: 0b10 is "written" (0b11 empty, 0b00 erased).
    this.image[this.at + ENTRY + (index >> 2)] &= ~(1 << ((index & 3) * 2));
  }
}

/** An entry's CRC covers its first 4 bytes and its last 24, not the CRC field itself. */
function entryCrc(entry: Uint8Array): number {
  const covered = new Uint8Array(28);
  covered.set(entry.subarray(0, 4));
  covered.set(entry.subarray(8), 4);
  return nvsCrc(covered);
}
