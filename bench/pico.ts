// What the firmware costs on the Raspberry Pi Pico W, where the Pico SDK is installed (PICO_SDK_DIR set,
// with the Moddable SDK): manifest.json built for pico/pico_w as the README's line builds it (release,
// `-m -t build`, every peripheral kind compiled in), its flash and static RAM read from the ELF, and beside
// them the XS heap manifest.json gives the chip, against the RP2040's 2 MB and 264 KB; the flash left
// between the image and the 768 KB littlefs backlog as the SDK reckons it; and what each role of the
// peripherals costs (bench/peripherals.ts). Where the RP2040's boot ROM is given too (RP2040_BOOTROM),
// bench/firmware (8 sensors, a 1,024-sample queue) built for the chip runs in rp2040js without its radio,
// and its XS heaps are read there after a garbage collection: 16-byte slots, the device's own sizes; and
// bench/firmware-peripherals gives what one entry of each kind holds there. Without the SDKs the section
// says why.
import { resolve } from 'node:path';
import { PICO_FLASH_BYTES, PICO_RAM_BYTES, buildPico, findPicoSdk, flashAfterImage, imageCost, picoCreation, picoPartition } from '../test/firmware/pico';
import type { PicoSdk } from '../test/firmware/pico';
import { Rp2040Run, findBootrom } from '../test/firmware/rp2040';
import { MEASURE_LINE, readMeasure } from './firmware';
import { entriesOnPico, roleCosts } from './peripherals';
import type { BenchRow, BenchSection } from './section';

const OUT = resolve('node_modules/.cache/feed-agent-pico');
const MEASURE_EVERY_MS = 15_000;

/** bench/firmware on the emulated chip, or why it did not run. */
async function onTheChip(sdk: PicoSdk, root: string): Promise<{ rows: BenchRow[]; figures: Record<string, number> } | string> {
  const bootrom = findBootrom();
  if (typeof bootrom !== 'string') return bootrom.skip;
  const app = resolve('bench/firmware');
  // No ssid: the radio is never brought up (rp2040js has none), and every exchange fails at once.
  const image = buildPico(sdk, root, app, OUT, ['-i'], {
    url: 'http://127.0.0.1:8080',
    publicKey: 'B3AC4F1E0D2C5A6B7E8F9012',
    token: 'bench-firmware-token-0001',
    resources: '401,402,403,404,405,406,407,408',
    measureEvery: MEASURE_EVERY_MS,
  });
  const run = new Rp2040Run(bootrom, image.uf2);
  const rows: BenchRow[] = [];
  const figures: Record<string, number> = {};
  try {
    const { slot, chunk, queued } = readMeasure(run.lines[await run.waitFor(MEASURE_LINE, 600_000)]);
    rows.push(
      { label: 'on the emulated chip, 8 sensors, queue 1,024: XS slot heap after gc', value: slot, unit: 'B = ' + slot / 16 + ' slots' },
      { label: 'the same: XS chunk heap after gc', value: chunk, unit: 'B' },
      { label: 'samples queued in ' + MEASURE_EVERY_MS / 1000 + ' s of chip time, every exchange failing', value: queued, unit: '' },
    );
    figures['firmware.pico.slotHeapUsed'] = slot;
    figures['firmware.pico.chunkHeapUsed'] = chunk;
  } finally {
    run.stop();
  }
  // What one entry of each kind holds on the chip, its C's buffers apart (the roles' static RAM above).
  for (const entry of await entriesOnPico(sdk, root, OUT, bootrom)) {
    rows.push({ label: 'XS heap of one ' + entry.name + ' entry on the chip: slots (16 B), and chunk bytes beside', value: entry.slots, unit: 'slots + ' + entry.chunkBytes + ' B' });
    figures['firmware.pico.entry.' + entry.name + '.slots'] = entry.slots;
    figures['firmware.pico.entry.' + entry.name + '.chunkBytes'] = entry.chunkBytes;
  }
  return { rows, figures };
}

export async function benchPico(): Promise<BenchSection> {
  const title = 'Firmware on the Raspberry Pi Pico W (manifest.json, release build for pico/pico_w)';
  const root = resolve('.');
  const sdk = findPicoSdk(root);
  if (typeof sdk === 'string') return { title, rows: [], figures: {}, note: 'skipped: ' + sdk };
  // A fixed directory under node_modules/.cache: the SDK's C is compiled only once there.
  const image = buildPico(sdk, root, root, OUT, [], {
    ssid: 'bench',
    password: 'bench-password',
    url: 'http://127.0.0.1:8080',
    publicKey: '5D4161963252F0EABB435339',
    token: 'bench-token',
    resources: 'uptime:201,heap:202,rssi:203,temperature:205,command:204',
  });
  const cost = imageCost(sdk.gccRoot, image.elf);
  const partition = picoPartition(root);
  const left = flashAfterImage(sdk.gccRoot, image.elf) - partition;
  const xsHeap = picoCreation(root).static;
  const roles = roleCosts(image.modules, image.map);
  const roleRows: BenchRow[] = roles.map((r) => ({
    label: 'flash of ' + r.label + ': bytecode + C; static RAM of its C',
    value: r.bytecode + r.nativeFlash,
    unit: 'B (' + r.bytecode + ' + ' + r.nativeFlash + '); ' + r.nativeRam + ' B RAM',
  }));
  const roleFigures: Record<string, number> = {};
  for (const r of roles) {
    roleFigures['firmware.pico.role.' + r.key + '.flashBytes'] = r.bytecode + r.nativeFlash;
    roleFigures['firmware.pico.role.' + r.key + '.ramBytes'] = r.nativeRam;
  }
  const percent = (part: number, whole: number): string => 'B (' + ((100 * part) / whole).toFixed(1) + ' %)';
  const chip = await onTheChip(sdk, root);
  return {
    title,
    note: typeof chip === 'string' ? 'on the emulated chip: skipped: ' + chip : undefined,
    rows: [
      { label: 'flash: sections loaded from flash (of 2 MB)', value: cost.flashBytes, unit: percent(cost.flashBytes, PICO_FLASH_BYTES) },
      { label: 'flash left between the image and littlefs (' + partition / 1024 + ' KiB, then 32 KB of preferences)', value: left, unit: percent(left, PICO_FLASH_BYTES) },
      { label: 'static RAM: .data, .bss and vectors (of 264 KB)', value: cost.ramBytes, unit: percent(cost.ramBytes, PICO_RAM_BYTES) },
      { label: 'XS heap, creation.static of manifest.json', value: xsHeap, unit: percent(xsHeap, PICO_RAM_BYTES) },
      { label: 'static RAM and XS heap (of 264 KB)', value: cost.ramBytes + xsHeap, unit: percent(cost.ramBytes + xsHeap, PICO_RAM_BYTES) },
      { label: 'arm-none-eabi-size text / data / bss', value: cost.text, unit: 'B / ' + cost.data + ' B / ' + cost.bss + ' B' },
      ...roleRows,
      ...(typeof chip === 'string' ? [] : chip.rows),
    ],
    figures: {
      'firmware.pico.flashBytes': cost.flashBytes,
      'firmware.pico.flashLeftBytes': left,
      'firmware.pico.ramBytes': cost.ramBytes,
      'firmware.pico.xsHeapBytes': xsHeap,
      ...roleFigures,
      ...(typeof chip === 'string' ? {} : chip.figures),
    },
  };
}
