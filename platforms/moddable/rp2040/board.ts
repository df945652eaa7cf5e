// firmware/board for the Raspberry Pi Pico W (manifest.json maps it): the RP2040's pins through the SDK's
// ECMA-419 IO classes, with two fixes of our own: the ADC input is selected before every read
// (adc-input.c), and pulses are counted by a PWM slice (edge-counter.c).
import Digital from 'embedded:io/digital';
import PWM from 'embedded:io/pwm';
import SMBus from 'embedded:io/smbus';
import type { AnalogPin, Board, Pull, PwmPin, Readable, Writable } from '../peripherals/board';
import AdcInput from '../rp2040/adc-input';
import EdgeCounter from '../rp2040/edge-counter';

const PULL_CODES = Object.freeze({ none: 0, up: 1, down: 2 });

function inputMode(pull: Pull): unknown {
  return pull === 'up' ? Digital.InputPullUp : pull === 'down' ? Digital.InputPullDown : Digital.Input;
}

// The SDK's Digital takes activeLow and initialValue, and has close() (modules/io/digital/digital.js); its
// typings do not say so, nor that PWM has close().
type DigitalOptions = ConstructorParameters<typeof Digital>[0] & { activeLow?: boolean; initialValue?: number };

export const board: Board = Object.freeze({
  name: 'the Pico W',
  pins: 30,
  // The CYW43439 radio's lines (the Pico W's datasheet): a description may not take them.
  reserved: Object.freeze({ 23: 'the radio\'s power line', 24: 'the radio\'s data line', 25: 'the radio\'s chip select', 29: 'the radio\'s clock' }),
  // GPIO 2n and 2n + 1 are PWM slice n (mod 8): its A and B outputs, and B its counter's clock.
  unit: (_kind: 'pulses' | 'pwm', pin: number) => 'PWM slice ' + ((pin >> 1) & 7) + ' (pins ' + (pin & ~1) + ' and ' + (pin | 1) + ')',
  input: (o: { pin: number; pull: Pull; inverted: boolean; onChange?: () => void }) =>
    new Digital({
      pin: o.pin,
      mode: inputMode(o.pull),
      activeLow: o.inverted,
      ...(o.onChange === undefined ? {} : { edge: Digital.Rising | Digital.Falling, onReadable: o.onChange }),
    } as DigitalOptions) as unknown as Readable,
  output: (o: { pin: number; inverted: boolean; initial: number }) =>
    new Digital({ pin: o.pin, mode: Digital.Output, activeLow: o.inverted, initialValue: o.initial } as DigitalOptions) as unknown as Writable,
  analog: (pin: number) => new AdcInput({ pin }) as unknown as AnalogPin,
  counter: (o: { pin: number; pull: Pull; edge: 'rising' | 'falling' }) => new EdgeCounter(o.pin, o.edge === 'falling', PULL_CODES[o.pull]),
  pwm: (o: { pin: number; hz: number }) => new PWM({ pin: o.pin, hz: o.hz }) as unknown as PwmPin,
  i2c: SMBus as unknown as Board['i2c'],
});
