// firmware/board for the ESP32 (manifest.json maps it): its pins through the SDK's ECMA-419 IO classes.
// Pulses are counted in JavaScript on a Digital's edge callback: the SDK's PulseCount drives the PCNT
// unit as a quadrature decoder (modules/io/pulsecount/esp32/_pulsecount.c: a rising edge counts down, a
// falling one up), which nets zero for the pulses of a meter on one pin. Edges that come within one turn
// of the event loop reach JavaScript as one callback: enough for a meter's few pulses a second.
import Digital from 'embedded:io/digital';
import Analog from 'embedded:io/analog';
import PWM from 'embedded:io/pwm';
import SMBus from 'embedded:io/smbus';
import type { AnalogPin, Board, Pull, PwmPin, Readable } from '../peripherals/board';
import { digitalPins } from '../peripherals/digital-pins';
import type { DigitalClass } from '../peripherals/digital-pins';

const digital = digitalPins(Digital as unknown as DigitalClass);

function counter(o: { pin: number; pull: Pull; edge: 'rising' | 'falling' }): Readable {
  const count = new Float64Array(1);
  const io = new (Digital as unknown as DigitalClass)({ pin: o.pin, mode: digital.mode(o.pull), edge: o.edge === 'rising' ? Digital.Rising : Digital.Falling, onReadable: () => void count[0]++ });
  return { read: () => count[0], close: () => io.close() };
}

// Analog and PWM have close() (modules/io/analog/esp32, modules/io/pwm/esp32), which their typings leave out.
export const board: Board = Object.freeze({
  name: 'the ESP32',
  pins: 49,
  // The IO classes refuse a pin the chip lacks; the pins of the module's flash differ from one ESP32 to another.
  reserved: Object.freeze({}),
  unit: () => null,
  input: digital.input,
  output: digital.output,
  analog: (pin: number) => new Analog({ pin }) as unknown as AnalogPin,
  counter,
  pwm: (o: { pin: number; hz: number }) => new PWM({ pin: o.pin, hz: o.hz }) as unknown as PwmPin,
  i2c: SMBus as unknown as Board['i2c'],
});
