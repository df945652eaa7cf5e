// The RP2040 build of firmware/temperature-adc: the raw 12-bit reading of the chip's temperature sensor
// (ADC input 4), from temperature-adc.c. manifest.json maps it for pico targets; firmware/sensors.ts
// converts it to degrees Celsius.
function readTemperatureAdc() @ "xs_feedagent_temperature_adc";

export { readTemperatureAdc };
