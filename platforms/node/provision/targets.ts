// What `feed-agent provision` writes for each chip: the file a device's identity goes in, and how to put
// it on the board (docs/firmware.md, "A fleet").
import type { Identity } from './identity';
import { PREFERENCE_DOMAIN } from './identity';
import { nvsImage } from './nvs-image';
import { PICO_PREFERENCES_ADDRESS, picoPreferenceProblems, picoPreferenceSectors } from './pico-preferences';
import { uf2File } from './uf2';

/** The ESP32's nvs partition in the firmware's partition tables (platforms/moddable/esp32/partitions-*.csv). */
export const ESP32_NVS = { offset: 0x9000, bytes: 0x4000 };

export interface Target {
  /** The file's name after the device's public key. */
  suffix: string;
  /** What this chip's store cannot hold, one line per field. */
  problems(identity: Identity): string[];
  bytes(identity: Identity): Uint8Array;
  /** The command that puts `file` on a board. */
  howToFlash(file: string): string;
}

const fields = (identity: Identity): Record<string, string> => Object.fromEntries(Object.entries(identity).filter(([, v]) => v !== undefined));

export const TARGETS: Record<'esp32' | 'pico', Target> = {
  esp32: {
    suffix: '.nvs.bin',
    problems: () => [],
    bytes: (identity) => nvsImage(PREFERENCE_DOMAIN, fields(identity), ESP32_NVS.bytes),
    howToFlash: (file) => 'esptool.py --chip esp32 write_flash 0x' + ESP32_NVS.offset.toString(16) + ' ' + file,
  },
  pico: {
    suffix: '.uf2',
    problems: picoPreferenceProblems,
    bytes: (identity) => uf2File(PICO_PREFERENCES_ADDRESS, picoPreferenceSectors(identity)),
    howToFlash: (file) => 'hold BOOTSEL, plug the board in, copy ' + file + ' to its RPI-RP2 drive (after the firmware\'s .uf2)',
  },
};
