// What the firmware costs on a real build, where the Moddable SDK is installed (MODDABLE set): the
// bytecode of the core and the adapter in a release build (what goes into flash), and, from a debug
// build of bench/firmware run in the simulator against the local service, the XS heaps after a garbage
// collection with 8 sensors and a 1,024-sample queue, and the deepest stack. On lin a slot is 32 bytes
// (16 on the ESP32): the slot heap's bytes are twice what the device spends; slot counts compare as
// they are. Without the SDK the section says why and gives no figure.
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { UPLINK_DEFAULTS } from '../src/core/config';
import { SampleQueue } from '../src/core/queue';
import { parseSeed } from '../src/service/seed';
import { startService } from '../src/service';
import { Simulator, buildApp, findSdk, xsbFiles } from '../test/firmware/sdk';
import type { BenchSection } from './section';

const APP = resolve('bench/firmware');
const LIN_SLOT_BYTES = 32;
const MEASURE_AFTER_MS = 15_000;
/** The typed arrays of bench/firmware's queue: 1,024 samples, the default string pool, no storage. */
const QUEUE_BYTES = new SampleQueue({ capacity: 1024, overflow: 'drop-oldest', stringBytes: UPLINK_DEFAULTS.stringBytes, withSeq: false, clock: { now: () => 0 } }).bytes;

export async function benchFirmware(): Promise<BenchSection> {
  const title = 'Firmware on a real Moddable build (lin simulator, the ESP32 budget of manifest.json)';
  const sdk = findSdk(resolve('.'));
  if (typeof sdk === 'string') return { title, rows: [], figures: {}, note: 'skipped: ' + sdk };
  // A fixed directory under node_modules/.cache: mcconfig compiles the SDK's C only once there.
  const out = resolve('node_modules/.cache/feed-agent-firmware');
  const bytecode = (modules: string): number =>
    ['feed-agent/src/core', 'feed-agent/platforms/moddable'].flatMap((prefix) => xsbFiles(modules, prefix))
      // The adapter's firmware/ is the app, not the adapter.
      .filter((file) => !file.slice(modules.length).includes('/firmware/'))
      .reduce((sum, file) => sum + statSync(file).size, 0);
  const release = buildApp(sdk, APP, out, {}, false);
  const coreBytecodeBytes = bytecode(release.modules);

  const seed = parseSeed(await readFile(join(APP, 'seed.json'), 'utf8'));
  const device = seed.devices[0];
  const service = await startService({ seed });
  let simulator: Simulator | null = null;
  try {
    const debug = buildApp(sdk, APP, out, {
      url: service.url,
      publicKey: device.public_key,
      token: device.token,
      resources: device.resources.map((r) => r.id_resource).join(','),
      measureAfter: MEASURE_AFTER_MS,
    });
    simulator = new Simulator(sdk, debug.library);
    const line = await simulator.waitFor(/^measure: slotHeapUsed/, MEASURE_AFTER_MS + 60_000);
    const [, slot, chunk, sent] = /slotHeapUsed (\d+) chunkHeapUsed (\d+) sent (\d+)/.exec(line) as RegExpExecArray;
    const stackPeak = Math.max(...simulator.instruments().map((i) => i['Stack used'] / LIN_SLOT_BYTES));
    const figures = {
      'firmware.coreBytecodeBytes': coreBytecodeBytes,
      'firmware.slotHeapUsed': Number(slot),
      'firmware.chunkHeapUsed': Number(chunk),
      'firmware.stackPeak': stackPeak,
    };
    return {
      title,
      rows: [
        { label: 'bytecode of the core and adapter, release build (flash)', value: coreBytecodeBytes, unit: 'B' },
        { label: 'XS slot heap after gc, 8 sensors, queue 1,024 (lin bytes)', value: Number(slot), unit: 'B = ' + Number(slot) / LIN_SLOT_BYTES + ' slots' },
        { label: 'XS chunk heap after gc (the queue\'s typed arrays ' + QUEUE_BYTES + ' B)', value: Number(chunk), unit: 'B' },
        { label: 'deepest stack (creation.stack is 384)', value: stackPeak, unit: 'slots' },
        { label: 'samples delivered before the measure', value: Number(sent), unit: '' },
      ],
      figures,
    };
  } finally {
    await simulator?.kill();
    await service.close();
  }
}
