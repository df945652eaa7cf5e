// What the firmware costs on the ESP32, where ESP-IDF is (IDF_PATH set, or ESP_ROOT naming a folder with
// the env.sh of a toolchain built from source; test/firmware/esp32.ts): manifest.json built for esp32 as
// the README's line builds it (release, `-m -t build`, FEED_AGENT_NET=openeth: the build this machine's
// toolchain can link, without Espressif's radio libraries), its app's size and static RAM read from the
// ELF, beside the XS heap manifest.json gives the chip. Where QEMU's esp32 machine is there too,
// bench/firmware (8 sensors, a 1,024-sample queue) built for it delivers to the local service over the
// emulated Ethernet and TLS, as bench/firmware.ts runs it on lin, and its XS heaps are read there after a
// garbage collection, with the deepest stack and the C heap left: 16-byte slots, the device's own sizes.
// Without the tools the section says why.
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseSeed } from '../src/service/seed';
import { startService } from '../src/service';
import { ESP32_SRAM_BYTES, buildEsp32, esp32Creation, esp32ImageCost, findEsp32 } from '../test/firmware/esp32';
import type { Esp32Tools } from '../test/firmware/esp32';
import { GUEST_SERVICE, boot, findQemu, writeFlash } from '../test/firmware/qemu';
import type { QemuRun } from '../test/firmware/qemu';
import { TlsFront } from './tls-front';
import { MEASURE_LINE, readMeasure } from './firmware';
import type { BenchRow, BenchSection } from './section';

const OUT = resolve('node_modules/.cache/feed-agent-esp32');
const APP = resolve('bench/firmware');
const MEASURE_EVERY_MS = 20_000;
/** The measure line read: the third, once the agent has delivered for a while. */
const MEASURES = 3;
const SLOT_BYTES = 16;

/** bench/firmware in QEMU's esp32 machine, over TLS to the local service, or why it did not run. */
async function inTheEmulator(tools: Esp32Tools): Promise<{ rows: BenchRow[]; figures: Record<string, number> } | string> {
  const qemu = findQemu(tools);
  if (typeof qemu !== 'string') return qemu.skip;
  const seed = parseSeed(await readFile(join(APP, 'seed.json'), 'utf8'));
  const device = seed.devices[0];
  const ids = device.resources.map((r) => r.id_resource);
  const service = await startService({ seed });
  // As bench/firmware.ts runs it on lin: the keep-alive host over TLS, through a terminator whose chain a
  // private root signed, made valid from 1970: the emulated board's clock starts there and reaches no time server.
  const front = await TlsFront.start(service.url, { ip: GUEST_SERVICE.address, fromEpoch: true });
  let run: QemuRun | null = null;
  try {
    const image = buildEsp32(tools, resolve('.'), front.app(join(OUT, 'firmware-tls'), join(APP, 'manifest.json')), OUT, ['-i'], {
      url: 'https://' + GUEST_SERVICE.address,
      publicKey: device.public_key,
      token: device.token,
      resources: ids.slice(0, -1).join(','),
      command: ids[ids.length - 1],
      ca: 'test-ca.der',
      measureEvery: MEASURE_EVERY_MS,
    }, 'openeth');
    const flash = join(OUT, 'bench-flash.bin');
    writeFlash(image, flash);
    run = await boot(tools, flash, { forwards: [{ address: GUEST_SERVICE.address, port: 443, hostPort: front.counting.port }] }, /^open_eth: IP address /);
    let line = -1;
    for (let i = 0; i < MEASURES; i++) line = await run.waitFor(MEASURE_LINE, MEASURE_EVERY_MS + 300_000, line + 1);
    const { slot, chunk, sent, queued } = readMeasure(run.lines[line]);
    const instruments = run.instruments();
    if (instruments.length === 0) throw new Error('no whole instruments line on the UART of the -i build:\n' + run.trace.slice(-20).join('\n'));
    const stackPeak = Math.max(...instruments.map((i) => i['Stack used'])) / SLOT_BYTES;
    const systemFree = Math.min(...instruments.map((i) => i['System bytes free']));
    return {
      rows: [
        { label: 'in QEMU, 8 sensors, queue 1,024, TLS open: XS slot heap after gc', value: slot, unit: 'B = ' + slot / SLOT_BYTES + ' slots' },
        { label: 'the same: XS chunk heap after gc', value: chunk, unit: 'B' },
        { label: 'deepest stack (creation.stack is ' + esp32Creation(resolve('.')).stack + ')', value: stackPeak, unit: 'slots' },
        { label: 'C heap left beside the XS heap, the least seen (System bytes free)', value: systemFree, unit: 'B' },
        { label: 'samples delivered by then, over one TLS connection of ' + front.counting.connections, value: sent, unit: '(' + queued + ' queued)' },
      ],
      figures: { 'firmware.esp32.slotHeapUsed': slot, 'firmware.esp32.chunkHeapUsed': chunk, 'firmware.esp32.stackPeak': stackPeak, 'firmware.esp32.systemFreeBytes': systemFree },
    };
  } finally {
    await run?.stop();
    await front.close();
    await service.close();
  }
}

export async function benchEsp32(): Promise<BenchSection> {
  const title = 'Firmware on the ESP32 (manifest.json, release build for esp32 with ESP-IDF, FEED_AGENT_NET=openeth)';
  const root = resolve('.');
  const tools = findEsp32(root);
  if (typeof tools === 'string') return { title, rows: [], figures: {}, note: 'skipped: ' + tools };
  const image = buildEsp32(tools, root, root, OUT, [], {
    url: 'http://' + GUEST_SERVICE.address,
    publicKey: '5D4161963252F0EABB435339',
    token: 'bench-token',
    resources: 'uptime:201,heap:202,rssi:203,command:204',
  }, 'openeth');
  const cost = esp32ImageCost(tools, image);
  const xsHeap = esp32Creation(root).static;
  const percent = (part: number, whole: number, of: string): string => 'B (' + ((100 * part) / whole).toFixed(1) + ' % of ' + of + ')';
  const emulator = await inTheEmulator(tools);
  return {
    title,
    note: typeof emulator === 'string' ? 'in QEMU: skipped: ' + emulator : undefined,
    rows: [
      { label: 'flash: the app image (of its factory partition)', value: cost.flashBytes, unit: percent(cost.flashBytes, cost.partitionBytes, (cost.partitionBytes / 1024) + ' KB') },
      { label: 'static RAM: DRAM (.data, .bss) and IRAM (code run from RAM)', value: cost.ramBytes, unit: 'B = ' + cost.dramBytes + ' + ' + cost.iramBytes },
      { label: 'XS heap, creation.static of manifest.json', value: xsHeap, unit: 'B' },
      { label: 'static RAM and XS heap (of 520 KB of SRAM)', value: cost.ramBytes + xsHeap, unit: percent(cost.ramBytes + xsHeap, ESP32_SRAM_BYTES, '520 KB') },
      ...(typeof emulator === 'string' ? [] : emulator.rows),
    ],
    figures: {
      'firmware.esp32.flashBytes': cost.flashBytes,
      'firmware.esp32.ramBytes': cost.ramBytes,
      'firmware.esp32.xsHeapBytes': xsHeap,
      ...(typeof emulator === 'string' ? {} : emulator.figures),
    },
  };
}
