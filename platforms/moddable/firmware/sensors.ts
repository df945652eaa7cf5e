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

export function firmwareSensors(settings: Settings, sources: SensorSources): SensorConfig[] {
  const { resources, every } = settings;
  const sensors: SensorConfig[] = [];
  if (resources.uptime !== undefined) sensors.push({ resource: resources.uptime, every, read: () => Math.floor(sources.now() / 1000) });
  // Free bytes need the heap's size, which the manifest gives as xsHeap beside creation.static.
  if (resources.heap !== undefined && settings.xsHeap > 0 && sources.heapUsed() !== undefined) {
    sensors.push({ resource: resources.heap, every, read: () => Math.max(0, settings.xsHeap - (sources.heapUsed() ?? Number.NaN)) });
  }
  if (resources.rssi !== undefined && sources.rssi() !== undefined) {
    sensors.push({ resource: resources.rssi, every, read: () => sources.rssi() ?? Number.NaN });
  }
  return sensors;
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

/** What `firmwareSensors` left out and why: one line, so the trace says what the device feeds. */
export function skippedRoles(settings: Settings, sensors: readonly SensorConfig[]): string[] {
  const fed = sensors.map((s) => s.resource);
  const skipped: string[] = [];
  const { heap, rssi } = settings.resources;
  if (heap !== undefined && fed.indexOf(heap) < 0) {
    skipped.push(settings.xsHeap > 0 ? 'heap (no instrumentation in this build: build with -d or -i)' : 'heap (no xsHeap in the config)');
  }
  if (rssi !== undefined && fed.indexOf(rssi) < 0) skipped.push('rssi (no Wi-Fi radio here)');
  return skipped;
}
