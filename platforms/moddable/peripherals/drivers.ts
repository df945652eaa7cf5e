// The SDK's ECMA-419 sensor drivers a build holds, found by name: each driver's manifest names its module
// embedded:sensor/<kinds>/<part> (modules/drivers/sensors/sht3x/manifest.json:
// embedded:sensor/Humidity-Temperature/SHT3x), so a description says "sht3x", or the whole module name.
import type { DriverLookup } from './description';

const PREFIX = 'embedded:sensor/';

export interface Drivers {
  lookup: DriverLookup;
  /** The parts, as a description may name them. */
  names: string[];
}

/** The drivers among `modules`, the module names of the build (the `modules` module's `Modules.host`). */
export function findDrivers(modules: readonly string[]): Drivers {
  const found: string[] = [];
  for (const m of modules) {
    // Archive paths may carry the compiled file's extension.
    const name = m.slice(-4) === '.xsb' ? m.slice(0, -4) : m;
    if (name.indexOf(PREFIX) === 0 && found.indexOf(name) < 0) found.push(name);
  }
  const part = (module: string): string => module.slice(module.lastIndexOf('/') + 1);
  return {
    names: found.map(part),
    lookup: (name) => {
      if (name.indexOf(PREFIX) === 0) return found.indexOf(name) >= 0 ? name : null;
      const wanted = name.toLowerCase();
      return found.find((m) => part(m).toLowerCase() === wanted) ?? null;
    },
  };
}
