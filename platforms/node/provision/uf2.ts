// A UF2 file (Microsoft's USB flashing format): what the RP2040's boot ROM writes to flash when the file
// is copied onto the RPI-RP2 drive a Pico shows in BOOTSEL mode. It writes only the blocks the file holds,
// so a small file beside the firmware's own changes those bytes and leaves the image as it was. Each
// 512-byte block carries 256 bytes for one flash page, tagged with the RP2040's family: the boot ROM
// takes only such blocks.

/** The RP2040's family id in UF2 (the boot ROM ignores a block of another family). */
export const RP2040_FAMILY = 0xe48bff56;
const BLOCK = 512;
/** One flash page per block, as the RP2040's boot ROM requires (and so the Pico SDK writes them). */
const PAYLOAD = 256;
const MAGIC_START_0 = 0x0a324655;
const MAGIC_START_1 = 0x9e5d5157;
const MAGIC_END = 0x0ab16f30;
/** Word 7 holds a family id rather than the file's size. */
const FLAG_FAMILY = 0x2000;

/** The UF2 file that writes `bytes` at `address` (both page-aligned) on a chip of `family`. */
export function uf2File(address: number, bytes: Uint8Array, family = RP2040_FAMILY): Uint8Array {
  if (address % PAYLOAD !== 0 || bytes.length % PAYLOAD !== 0 || bytes.length === 0) {
    throw new RangeError('UF2: ' + bytes.length + ' bytes at 0x' + address.toString(16) + ': expected whole pages of ' + PAYLOAD + ' bytes at a page boundary');
  }
  const count = bytes.length / PAYLOAD;
  const file = new Uint8Array(count * BLOCK);
  const view = new DataView(file.buffer);
  for (let i = 0; i < count; i++) {
    const at = i * BLOCK;
    const words = [MAGIC_START_0, MAGIC_START_1, FLAG_FAMILY, address + i * PAYLOAD, PAYLOAD, i, count, family];
    words.forEach((word, w) => view.setUint32(at + w * 4, word, true));
    file.set(bytes.subarray(i * PAYLOAD, (i + 1) * PAYLOAD), at + 32);
    view.setUint32(at + BLOCK - 4, MAGIC_END, true);
  }
  return file;
}
