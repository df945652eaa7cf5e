// firmware/board for the Raspberry Pi Pico W (manifest.json maps it): the RP2040's pins through the SDK's
// ECMA-419 IO classes, with two fixes of our own: the ADC input is selected before every read
// (adc-input.c), and pulses are counted by a PWM slice (edge-counter.c).
import Digital from 'embedded:io/digital';
import PWM from 'embedded:io/pwm';
import SMBus from 'embedded:io/smbus';
import type { AnalogPin, Board, Pull, PwmPin } from '../peripherals/board';
import { digitalPins } from '../peripherals/digital-pins';
import type { DigitalClass } from '../peripherals/digital-pins';
import AdcInput from '../rp2040/adc-input';
import EdgeCounter from '../rp2040/edge-counter';

const PULL_CODES = Object.freeze({ none: 0, up: 1, down: 2 });
const digital = digitalPins(Digital as unknown as DigitalClass);

// PWM has close() (modules/io/pwm/pico/_pwm.js), which its typings leave out; Analog too.
export const board: Board = Object.freeze({
  name: 'the Pico W',
  pins: 30,
  // The CYW43439 radio's lines (the Pico W's datasheet): a description may not take them.
  reserved: Object.freeze({ 23: 'the radio\'s power line', 24: 'the radio\'s data line', 25: 'the radio\'s chip select', 29: 'the radio\'s clock' }),
  // GPIO 2n and 2n + 1 are PWM slice n (mod 8): its A and B outputs, and B its counter's clock.
  unit: (_kind: 'pulses' | 'pwm', pin: number) => 'PWM slice ' + ((pin >> 1) & 7) + ' (pins ' + (pin & ~1) + ' and ' + (pin | 1) + ')',
  input: digital.input,
  output: digital.output,
  analog: (pin: number) => new AdcInput({ pin }) as unknown as AnalogPin,
  counter: (o: { pin: number; pull: Pull; edge: 'rising' | 'falling' }) => new EdgeCounter(o.pin, o.edge === 'falling', PULL_CODES[o.pull]),
  pwm: (o: { pin: number; hz: number }) => new PWM({ pin: o.pin, hz: o.hz }) as unknown as PwmPin,
  i2c: SMBus as unknown as Board['i2c'],
});
