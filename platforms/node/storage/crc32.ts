// CRC-32 (IEEE 802.3, the one zlib and PNG use): Node 20 has no zlib.crc32, and a table-based one is short.

const TABLE = buildTable();

function buildTable(): Uint32Array {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
}

/**
 * The CRC-32 of `bytes[start, end)`, as an unsigned 32-bit integer. `value` continues an earlier CRC as
 * zlib's crc32(data, value) does; ESP-IDF's NVS passes 0xffffffff (its ROM's crc32_le), which makes the
 * register start at 0.
 */
export function crc32(bytes: Uint8Array, start = 0, end = bytes.length, value = 0): number {
  let c = (value ^ 0xffffffff) >>> 0;
  for (let i = start; i < end; i++) c = TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
