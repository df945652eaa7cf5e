// The ESP32's flash layouts (manifest.json, esp32: FEED_AGENT_FLASH picks one): each one's partition table,
// platforms/moddable/esp32/partitions-<layout>.csv, and the backlog bound its flash-<layout>.json sets.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ESP32 = join(dirname(dirname(dirname(fileURLToPath(import.meta.url)))), 'platforms', 'moddable', 'esp32');

/** The layouts there is a partition table for (4mb, 8mb). */
export function flashLayouts(): string[] {
  return readdirSync(ESP32).map((f) => /^partitions-(.+)\.csv$/.exec(f)?.[1]).filter((l): l is string => l !== undefined).sort();
}

/** The size of the first partition of an ESP-IDF partition table (`csv`, a path) whose fields `pick` takes. */
export function partitionBytes(csv: string, pick: (fields: string[]) => boolean): number {
  const row = readFileSync(csv, 'utf8').split('\n').map((l) => l.split(',').map((f) => f.trim())).find(pick);
  if (row === undefined) throw new Error('no such partition in ' + csv);
  return Number(row[4]);
}

/** The size of the storage partition (littlefs, the backlog) of `layout`. */
export function storageBytes(layout: string): number {
  return partitionBytes(join(ESP32, 'partitions-' + layout + '.csv'), (f) => f[0] === 'storage');
}

/** The backlogBytes that `layout`'s flash-<layout>.json gives the build. */
export function layoutBacklogBytes(layout: string): number {
  const file = JSON.parse(readFileSync(join(ESP32, 'flash-' + layout + '.json'), 'utf8')) as { config?: { backlogBytes?: number } };
  const bytes = file.config?.backlogBytes;
  if (typeof bytes !== 'number') throw new Error('flash-' + layout + '.json sets no config.backlogBytes');
  return bytes;
}
