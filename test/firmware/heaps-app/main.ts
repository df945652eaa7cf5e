// The firmware (platforms/moddable/firmware/main.ts) as it runs, and every heapsEvery ms (default 10 s) a
// garbage collection and one line of what the XS heaps hold after it: `heaps: slot N chunk M` (bytes).
import config from 'mc/config';
import Debug from 'debug';
import Instrumentation from 'instrumentation';
import Timer from 'timer';
import firmware from '../../../platforms/moddable/firmware/main';

export default function main(): void {
  firmware();
  const slots = Instrumentation.map('XS Slot Heap Used');
  const chunks = Instrumentation.map('XS Chunk Heap Used');
  Timer.repeat(() => {
    Debug.gc();
    trace('heaps: slot ' + (Instrumentation.get(slots) ?? -1) + ' chunk ' + (Instrumentation.get(chunks) ?? -1) + '\n');
  }, Number(config.heapsEvery ?? 10_000));
}
