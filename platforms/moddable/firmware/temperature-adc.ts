// The chip's temperature sensor, on boards that have none the firmware can read (the ESP32 and the
// simulator): no reading, so the temperature role is skipped. manifest.json maps this module to
// ../rp2040/temperature-adc (JavaScript and C) for pico targets, where it reads the RP2040's sensor.

/** The raw 12-bit reading of the RP2040's temperature sensor (ADC input 4), or undefined without one. */
export function readTemperatureAdc(): number | undefined {
  return undefined;
}
