// Digital inputs and outputs through the SDK's ECMA-419 Digital class (modules/io/digital/digital.js), as
// the ESP32's and the Pico W's boards open them. The class comes in as a value: this folder never imports
// the SDK.
import type { Pull, Readable, Writable } from './board';

/** What of embedded:io/digital the boards use: activeLow and initialValue too, which its typings leave out. */
export interface DigitalClass {
  new (options: { pin: number; mode: unknown; activeLow?: boolean; initialValue?: number; edge?: number; onReadable?: () => void }): Readable & Writable;
  readonly Input: unknown;
  readonly InputPullUp: unknown;
  readonly InputPullDown: unknown;
  readonly Output: unknown;
  readonly Rising: number;
  readonly Falling: number;
}

export interface DigitalPins {
  /** The input mode of a pull. */
  mode(pull: Pull): unknown;
  /** `inverted` is the class's activeLow; `onChange` runs on both edges. */
  input(o: { pin: number; pull: Pull; inverted: boolean; onChange?: () => void }): Readable;
  /** At `initial` from the moment it opens (initialValue): a relay never passes through the other level at boot. */
  output(o: { pin: number; inverted: boolean; initial: number }): Writable;
}

export function digitalPins(digital: DigitalClass): DigitalPins {
  // Closures over a const, not a parameter: on a Moddable build, one over a parameter costs a RAM pointer.
  const Digital = digital;
  const mode = (pull: Pull): unknown => (pull === 'up' ? Digital.InputPullUp : pull === 'down' ? Digital.InputPullDown : Digital.Input);
  return Object.freeze({
    mode,
    input: (o: { pin: number; pull: Pull; inverted: boolean; onChange?: () => void }): Readable =>
      new Digital({
        pin: o.pin,
        mode: mode(o.pull),
        activeLow: o.inverted,
        ...(o.onChange === undefined ? {} : { edge: Digital.Rising | Digital.Falling, onReadable: o.onChange }),
      }),
    output: (o: { pin: number; inverted: boolean; initial: number }): Writable => new Digital({ pin: o.pin, mode: Digital.Output, activeLow: o.inverted, initialValue: o.initial }),
  });
}
