// What each kind of peripheral holds of the XS heaps, measured by npm run bench (bench/pico.ts on the
// emulated Pico W, bench/firmware.ts on lin): the firmware's own description and peripherals, each entry
// of the config's description opened alone and kept, its heaps read after a garbage collection before and
// after, minus what opening nothing holds. One line each: "measure: <name> slots <bytes> chunks <bytes>"
// (Instrumentation counts the slot heap in bytes).
import config from 'mc/config';
import Debug from 'debug';
import Instrumentation from 'instrumentation';
import Modules from 'modules';
import Time from 'time';
import { board } from '../../platforms/moddable/firmware/board';
import { readDescription } from '../../platforms/moddable/peripherals/description';
import { findDrivers } from '../../platforms/moddable/peripherals/drivers';
import type { DriverClass } from '../../platforms/moddable/peripherals/i2c-sensor';
import { openPeripherals } from '../../platforms/moddable/peripherals/open';
import type { Peripheral } from '../../platforms/moddable/peripherals/description';

export default function main(): void {
  const slots = Instrumentation.map('XS Slot Heap Used'), chunks = Instrumentation.map('XS Chunk Heap Used');
  const used = (): [number, number] => {
    Debug.gc();
    return [Instrumentation.get(slots) ?? -1, Instrumentation.get(chunks) ?? -1];
  };
  const drivers = findDrivers(Modules.host);
  const description = readDescription(config.peripherals, { every: 1000, commandEvery: 1000, board, driver: drivers.lookup, drivers: drivers.names, taken: [] });
  if (description.problems.length > 0) trace('measure: problems ' + description.problems.join('; ') + '\n');
  const wiring = {
    board,
    importDriver: (module: string) => Modules.importNow(module) as DriverClass,
    now: () => Time.ticks,
    say: (text: string) => trace('measure: said ' + text + '\n'),
    boardReading: () => 'none here',
  };
  const kept: unknown[] = [];
  const open = (list: Peripheral[]): [number, number] => {
    const [s0, c0] = used();
    kept.push(openPeripherals(list, wiring));
    const [s1, c1] = used();
    return [s1 - s0, c1 - c0];
  };
  // Opening nothing: the arrays and closures every call makes, whatever it opens.
  const [noneSlots, noneChunks] = open([]);
  for (const p of description.peripherals) {
    const [s, c] = open([p]);
    trace('measure: ' + p.name + ' slots ' + (s - noneSlots) + ' chunks ' + (c - noneChunks) + '\n');
  }
  trace('measure: done\n');
}
