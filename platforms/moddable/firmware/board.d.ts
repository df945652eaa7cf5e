// The board's pins, for the peripherals of the description (../peripherals). manifest.json maps this
// module to ../rp2040/board (the Pico W), ../esp32/board or ../lin/board (the simulator: stand-in pins
// in files, with pins=<folder>; else none).
import type { Board } from '../peripherals/board';

/** null: this build has no pins. */
export declare const board: Board | null;
