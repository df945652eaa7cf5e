// The readings any ESP32 can give without extra hardware, and the actuator that shows commands: what the
// firmware feeds on the resources named in `resources=…`. Their sources come in as values, so that they
// run in tests as on the device.
import type { ActuatorConfig, SensorConfig } from '../../../src/core/config';
import type { Settings } from './settings';

/** Where the readings come from: the host's clock, the XS heap's counters, the Wi-Fi radio. */
export interface SensorSources {
  /** Milliseconds since the firmware started (the host's monotonic clock). */
  now(): number;
  /**
   * Bytes of the XS slot and chunk heaps in use (Instrumentation "XS Slot Heap Used" + "XS Chunk Heap
   * Used"), or undefined in a build without instrumentation (a release build: mcconfig without -d or -i).
   */
  heapUsed(): number | undefined;
  /** The Wi-Fi RSSI in dBm, or undefined where the platform has no radio (the simulator). */
  rssi(): number | undefined;
  trace(text: string): void;
}

/**
 * The sensors of the roles given in `resources=…`, and the roles left out with why (`skipped`: one line in
 * the trace, so that it says what the device feeds).
 */
export function firmwareSensors(settings: Settings, sources: SensorSources): { sensors: SensorConfig[]; skipped: string[] } {
  const { resources, every } = settings;
  const sensors: SensorConfig[] = [];
  const skipped: string[] = [];
  if (resources.uptime !== undefined) sensors.push({ resource: resources.uptime, every, read: () => Math.floor(sources.now() / 1000) });
  // Free bytes need the heap's size, which the manifest gives as xsHeap beside creation.static.
  const { heap, rssi } = resources;
  if (heap !== undefined) {
    if (settings.xsHeap <= 0) skipped.push('heap (no xsHeap in the config)');
    else if (sources.heapUsed() === undefined) skipped.push('heap (no instrumentation in this build: build with -d or -i)');
    else sensors.push({ resource: heap, every, read: () => Math.max(0, settings.xsHeap - (sources.heapUsed() ?? Number.NaN)) });
  }
  if (rssi !== undefined) {
    if (sources.rssi() === undefined) skipped.push('rssi (no Wi-Fi radio here)');
    else sensors.push({ resource: rssi, every, read: () => sources.rssi() ?? Number.NaN });
  }
  return { sensors, skipped };
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
