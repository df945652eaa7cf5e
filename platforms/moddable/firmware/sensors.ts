// The readings a board gives without extra hardware, and the actuator that shows commands: what the
// firmware feeds on the resources named in `resources=…`. Their sources come in as values, so that they
// run in tests as on the device.
import type { ActuatorConfig, SensorConfig } from '../../../src/core/config';
import { BOARD_READINGS } from '../peripherals/description';
import type { BoardReading } from '../peripherals/description';
import type { Settings } from './settings';

/** Where the readings come from: the host's clock, the XS heap's counters, the Wi-Fi radio, the chip. */
export interface SensorSources {
  /** Milliseconds since the firmware started (the host's monotonic clock). */
  now(): number;
  /**
   * Bytes of the XS slot and chunk heaps in use (Instrumentation "XS Slot Heap Used" + "XS Chunk Heap
   * Used"), or undefined in a build without instrumentation (a release build: mcconfig without -d or -i).
   */
  heapUsed(): number | undefined;
  /**
   * The Wi-Fi RSSI in dBm, or undefined where the SDK's `Net` gives none: the simulator, and the Pico W
   * (modules/network/net/pico/modNet.c answers IP, MAC and SSID only).
   */
  rssi(): number | undefined;
  /** The raw 12-bit reading of the RP2040's temperature sensor, or undefined on a board without one. */
  temperatureAdc(): number | undefined;
  trace(text: string): void;
}

/**
 * The sensors of the roles given in `resources=…`, and the roles left out with why (`skipped`: one line in
 * the trace, so that it says what the device feeds).
 */
export function firmwareSensors(settings: Settings, sources: SensorSources): { sensors: SensorConfig[]; skipped: string[] } {
  const sensors: SensorConfig[] = [];
  const skipped: string[] = [];
  for (const role of BOARD_READINGS) {
    const resource = settings.resources[role];
    if (resource === undefined) continue;
    const read = boardReading(role, settings, sources);
    if (typeof read === 'string') skipped.push(role + ' (' + read + ')');
    else sensors.push({ resource, every: settings.every, read });
  }
  return { sensors, skipped };
}

/** A board reading's reader, or why this board or build has none. */
export function boardReading(reading: BoardReading, settings: Pick<Settings, 'xsHeap'>, sources: SensorSources): (() => number) | string {
  switch (reading) {
    case 'uptime':
      return () => Math.floor(sources.now() / 1000);
    case 'heap':
      // Free bytes need the heap's size, which the manifest gives as xsHeap beside creation.static.
      if (settings.xsHeap <= 0) return 'no xsHeap in the config';
      if (sources.heapUsed() === undefined) return 'no instrumentation in this build: build with -d or -i';
      return () => Math.max(0, settings.xsHeap - (sources.heapUsed() ?? Number.NaN));
    case 'rssi':
      if (sources.rssi() === undefined) return 'this platform\'s Net reports no RSSI';
      return () => sources.rssi() ?? Number.NaN;
    default:
      if (sources.temperatureAdc() === undefined) return 'no RP2040 temperature sensor on this board';
      return () => rp2040Celsius(sources.temperatureAdc() ?? Number.NaN);
  }
}

/**
 * Degrees Celsius, to a tenth, from a raw reading of the RP2040's temperature sensor, as the RP2040
 * datasheet gives it (section 4.9.5): the 12-bit reading is a voltage against the ADC's 3.3 V reference,
 * V = raw × 3.3 / 4096, and T = 27 − (V − 0.706) / 0.001721 (0.706 V at 27 °C, −1.721 mV per degree). The
 * sensor measures the die, not the air, and the datasheet warns that the reference's accuracy moves it by
 * degrees: a trend more than an absolute reading.
 */
export function rp2040Celsius(raw: number): number {
  const volts = (raw * 3.3) / 4096;
  return Math.round((27 - (volts - 0.706) / 0.001721) * 10) / 10;
}

/** The command resource's actuator: each new command is traced once, with its value as the subtype means it. */
export function firmwareActuators(settings: Settings, sources: Pick<SensorSources, 'trace'>): ActuatorConfig[] {
  const resource = settings.resources.command;
  if (resource === undefined) return [];
  return [{
    resource,
    every: settings.commandEvery,
    handle: (value, feed) => sources.trace('feed-agent: command ' + JSON.stringify(value) + ' for resource ' + resource + ' (feed ' + feed.id_resource_feed + ')\n'),
  }];
}
