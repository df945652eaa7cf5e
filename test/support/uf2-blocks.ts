// The blocks of a UF2 file that the RP2040's boot ROM writes to flash, by its own rules (raspberrypi/
// pico-bootrom, bootrom/virtual_disk.c, vd_write_block and _update_current_uf2_info): both start magics
// and the end magic, the family flag with the RP2040's family, not marked "not main flash", a payload of
// 256 bytes, a page-aligned target in flash, a block number below the block count. The ROM ignores any
// other block; so does this reader, and it says how many it ignored, so that a test can require none.

const FLASH_START = 0x10000000;
/** The RP2040 addresses up to 16 MB of flash through XIP. */
const FLASH_END = 0x11000000;
const PAGE = 256;
const RP2040_FAMILY = 0xe48bff56;
const FLAG_NOT_MAIN_FLASH = 0x1;
const FLAG_FAMILY = 0x2000;

export interface Uf2Block {
  /** The flash address the block's page is written at. */
  address: number;
  data: Uint8Array;
  blockNo: number;
  numBlocks: number;
}

/** The blocks of `file` the boot ROM writes, and how many of its 512-byte blocks it would ignore. */
export function uf2Blocks(file: Uint8Array): { blocks: Uf2Block[]; ignored: number } {
  if (file.length % 512 !== 0) throw new Error('a UF2 file is whole 512-byte blocks: ' + file.length + ' bytes');
  const view = new DataView(file.buffer, file.byteOffset, file.length);
  const blocks: Uf2Block[] = [];
  let ignored = 0;
  for (let at = 0; at < file.length; at += 512) {
    const word = (i: number): number => view.getUint32(at + i * 4, true);
    const [flags, address, payload, blockNo, numBlocks, family] = [word(2), word(3), word(4), word(5), word(6), word(7)];
    const taken =
      word(0) === 0x0a324655 && word(1) === 0x9e5d5157 && view.getUint32(at + 508, true) === 0x0ab16f30 &&
      (flags & FLAG_FAMILY) !== 0 && family === RP2040_FAMILY && (flags & FLAG_NOT_MAIN_FLASH) === 0 && payload === PAGE &&
      address % PAGE === 0 && address >= FLASH_START && address + PAGE <= FLASH_END && numBlocks > 0 && blockNo < numBlocks;
    if (taken) blocks.push({ address, data: file.subarray(at + 32, at + 32 + PAGE), blockNo, numBlocks });
    else ignored++;
  }
  return { blocks, ignored };
}
