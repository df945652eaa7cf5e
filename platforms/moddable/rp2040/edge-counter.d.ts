// rp2040/edge-counter.js: a pulse counter on a PWM slice of the RP2040 (edge-counter.c).
declare class EdgeCounter {
  /** `pin` must be odd (a slice's B input); `pull`: 0 none, 1 up, 2 down. */
  constructor(pin: number, falling: boolean, pull: number);
  /** Edges counted since it opened. */
  read(): number;
  close(): void;
}
export default EdgeCounter;
