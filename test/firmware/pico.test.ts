// The firmware as users flash it (manifest.json) built for the Raspberry Pi Pico W with the real Moddable
// and Pico SDKs, through the README's build line, and run instruction by instruction in rp2040js. Runs
// where PICO_SDK_DIR is set (with the Moddable SDK; the emulator part where RP2040_BOOTROM names the
// chip's boot ROM too); elsewhere it is skipped with the reason.
//
// rp2040js does not emulate the Pico W's radio (the CYW43439 behind a PIO-driven SPI bus): given an ssid
// (ssid= or provisioned), the firmware's setup/network (platforms/moddable/firmware/wifi-join.ts) finds
// that the radio does not start, says so, and lets main run. Without one it never touches the radio. Either
// way the agent runs as on a Pico W out of Wi-Fi's reach: it samples, queues, and every exchange fails.
import { spawnSync } from 'node:child_process';
import { copyFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PICO_BACKLOG_BYTES, PICO_FLASH_BYTES, PICO_RAM_BYTES, buildPico, findPicoSdk, flashAfterImage, imageCost, picoCreation, picoPartition } from './pico';
import type { PicoImage, PicoSdk } from './pico';
import { checkIdentity } from '../../platforms/node/provision/identity';
import type { Identity } from '../../platforms/node/provision/identity';
import { PICO_PREFERENCES_ADDRESS, picoPreferenceSectors } from '../../platforms/node/provision/pico-preferences';
import { uf2File } from '../../platforms/node/provision/uf2';
import { Rp2040Run, findBootrom, symbolAddress } from './rp2040';
import { findSdk } from './sdk';
import { Sht3xPart, sht3xCelsius, sht3xPercent } from './sht3x';

const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const sdk = findPicoSdk(ROOT);
const bootrom = findBootrom();
/** A 12-bit reading of the temperature sensor's input: 0.706 V, 27 °C on the datasheet's line. */
const ADC_27C = 876;
const CONFIG = {
  url: 'http://127.0.0.1:8080',
  publicKey: '5D4161963252F0EABB435339',
  token: 'pico-test-token',
  resources: 'uptime:201,heap:202,rssi:203,temperature:205,command:204',
  every: 1000,
  statusEvery: 5000,
  spillEvery: 6,
  // A small queue in RAM, so that the emulated chip, at an eighth of its speed, has a backlog on flash within a minute.
  queue: 32,
};
/** The image a fleet shares: the build's settings without an identity, which each device gets provisioned. */
const SHARED = Object.fromEntries(Object.entries(CONFIG).filter(([key]) => !['url', 'publicKey', 'token'].includes(key)));
/** One device's identity, as `feed-agent provision` checks it (a loopback URL: the emulated chip has no network anyway). */
const PROVISIONED = (checkIdentity({ publicKey: '3C71BF5A9E02D4F86A1C7B30', token: '9F4E1A7C2B5D8E3F60A1C4D7', url: 'http://127.0.0.2:8081/fleet' }) as { identity: Identity }).identity;
/** Another device, provisioned with a Wi-Fi network too. */
const WITH_NETWORK = (checkIdentity({ publicKey: '7A0C3E51B9D24F6810AB5C2E', token: '2B7D9E4A1C6F3085D7E2A9B4', url: 'http://127.0.0.3:8082/fleet', ssid: 'FleetNet', password: 'fleet-wpa2-passphrase' }) as { identity: Identity }).identity;
/** Waits until the chip's clock has run `ms` past `from`, at most `wallMs` of real time. */
async function chipRuns(device: Rp2040Run, from: number, ms: number, wallMs: number): Promise<void> {
  const end = Date.now() + wallMs;
  while (device.chipNow - from < ms) {
    if (Date.now() > end) throw new Error('the chip ran ' + Math.round(device.chipNow - from) + ' of ' + ms + ' ms within ' + wallMs + ' ms of real time');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

if (typeof sdk === 'string') console.log('Pico W tests skipped: ' + sdk);
else if (typeof bootrom !== 'string') console.log('Pico W emulator tests skipped: ' + bootrom.skip);

describe.skipIf(typeof findSdk(ROOT) === 'string')('npm run build:moddable for a pico target', () => {
  it('names every missing piece of the Pico SDK, with the variable that points at it, and builds nothing', () => {
    const env: Record<string, string | undefined> = { ...process.env, PICO_ROOT: '/nonexistent/pico', PICO_GCC_ROOT: '/nonexistent/gcc' };
    for (const name of ['PICO_SDK_DIR', 'PICO_EXTRAS_DIR', 'UF2CONV']) delete env[name];
    const run = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-moddable.mjs'), '-m', '-p', 'pico/pico_w', '-t', 'build', 'token=secret'], { env, encoding: 'utf8' });
    expect(run.status).toBe(1);
    const lines = run.stderr.trim().split('\n').slice(1).map((l) => l.trim().split(/[ :]/)[0]);
    expect(lines).toEqual(['PICO_ROOT', 'PICO_SDK_DIR', 'PICO_EXTRAS_DIR', '/nonexistent/pico/pico-examples', '/nonexistent/pico/pico-sdk/build/pioasm/pioasm', 'PICO_GCC_ROOT', 'UF2CONV']);
    expect(run.stdout).toBe('');
  });
});

describe.skipIf(typeof sdk === 'string')('the firmware built for the Raspberry Pi Pico W', () => {
  const out = join(ROOT, 'node_modules', '.cache', 'feed-agent-pico-test');
  let offline: PicoImage;
  let withRadio: PicoImage;
  let unprovisioned: PicoImage;
  let run: Rp2040Run | null = null;
  /** A device's UF2 of its identity, which a user copies onto the board after the image. */
  const provisioning = (identity: Identity): string => {
    const file = join(out, 'provision-' + identity.publicKey + '.uf2');
    writeFileSync(file, uf2File(PICO_PREFERENCES_ADDRESS, picoPreferenceSectors(identity)));
    return file;
  };
  /** Where the Pico SDK hands text to its USB serial driver (stdio_usb_out_chars), in the shared image. */
  const serialOut = (): number => symbolAddress((sdk as PicoSdk).gccRoot, unprovisioned.elf, 'stdio_usb_out_chars');

  beforeAll(() => {
    const pico = sdk as PicoSdk;
    // -i: a release build with instrumentation, whose trace goes to the USB serial (a debug build's goes
    // to xsbug). The same output folder each time: a later build only compiles the config and links.
    const kept = (config: Record<string, string | number>, suffix: string): PicoImage => {
      const image = buildPico(pico, ROOT, ROOT, out, ['-i'], config);
      const copy = { uf2: image.uf2 + suffix, elf: image.elf + suffix };
      copyFileSync(image.uf2, copy.uf2);
      copyFileSync(image.elf, copy.elf);
      return copy;
    };
    withRadio = kept({ ...CONFIG, ssid: 'TestNet', password: 'test-password' }, '.radio');
    unprovisioned = kept(SHARED, '.shared');
    offline = buildPico(pico, ROOT, ROOT, out, ['-i'], CONFIG);
  }, 1_800_000);

  afterEach(() => {
    run?.stop();
    run = null;
  });

  it('fits the chip, every peripheral kind compiled in: the image within 2 MB, static RAM with the manifest\'s XS heap within 264 KB', () => {
    const cost = imageCost((sdk as PicoSdk).gccRoot, offline.elf);
    const xsHeap = picoCreation(ROOT).static;
    expect(cost.flashBytes).toBeGreaterThan(cost.text - 1);
    expect(cost.flashBytes).toBeLessThan(PICO_FLASH_BYTES);
    expect(cost.ramBytes).toBeGreaterThan(cost.bss);
    expect(cost.ramBytes + xsHeap).toBeLessThan(PICO_RAM_BYTES);
  });

  it('leaves room for littlefs\'s 768 KiB after the image: modGetPartition gives it only when it fits, or none', () => {
    const room = flashAfterImage((sdk as PicoSdk).gccRoot, offline.elf);
    const partition = picoPartition(ROOT);
    console.log('Pico W flash: ' + room + ' bytes between the image and the preferences, ' + (room - partition) + ' of them left beside littlefs\'s ' + partition);
    expect(partition).toBe(PICO_BACKLOG_BYTES);
    expect(room).toBeGreaterThanOrEqual(partition);
  });

  describe.skipIf(typeof bootrom !== 'string')('in rp2040js', () => {
    it('runs the agent without the radio: it samples, queues, and its exchanges fail without losing a reading', async () => {
      const device = new Rp2040Run(bootrom as string, offline.uf2);
      run = device;
      device.setAdc(4, ADC_27C);
      const line = (i: number): string => device.lines[i];
      // uptime, heap (instrumented build) and the RP2040's temperature; RSSI is not in the Pico's Net.
      expect(line(await device.waitFor(/^feed-agent: device /, 120_000))).toBe('feed-agent: device ' + CONFIG.publicKey + ' at ' + CONFIG.url +
        ': 3 sensors every 1000 ms, 1 command resource; not fed: rssi (this platform\'s Net reports no RSSI)');
      const started = await device.waitFor(/^feed-agent: started$/, 60_000);
      const status = await device.waitFor(/^feed-agent: queued [1-9]/, 180_000);
      expect(line(status)).toMatch(/sent 0 in 0 batches, retries \d+, dropped 0, rejected 0, .*failed to allocate socket/);
      // Three sensors sampled every second of the chip's time since the agent started: none dropped or refused.
      const queued = Number(/queued (\d+)\//.exec(line(status))?.[1]);
      const seconds = Math.floor((device.chipMs[status] - device.chipMs[started]) / 1000);
      expect(queued).toBeGreaterThanOrEqual(3 * seconds);
      expect(queued).toBeLessThanOrEqual(3 * (seconds + 1));
    }, 300_000);

    it('keeps its backlog in littlefs on the chip\'s flash, beyond the queue in RAM, and restores it after a power cut', async () => {
      const first = new Rp2040Run(bootrom as string, offline.uf2);
      run = first;
      // The first flush fails at about 10 s of chip time; from then on the queue goes to flash in bursts of
      // 6, and once its 32 are full every sample goes there, committed every 6.
      const status = await first.waitFor(/^feed-agent: queued ([6-9]\d|\d{3,})\//, 300_000);
      const queued = Number(/queued (\d+)\//.exec(first.lines[status])?.[1]);
      const flash = first.stop();
      const second = new Rp2040Run(bootrom as string, offline.uf2, flash);
      run = second;
      const line = second.lines[await second.waitFor(/restored \d+ unacknowledged samples/, 120_000)];
      console.log('Pico W in rp2040js: ' + queued + ' queued at the last status line before the power cut; after it: ' + line);
      const [restored, waiting] = (/restored (\d+) unacknowledged samples from durable storage \((\d+) of them wait/.exec(line) as RegExpExecArray).slice(1).map(Number);
      // Everything up to the last burst: what the status line counted, less a burst at most, and what came after it.
      expect(restored).toBeGreaterThanOrEqual(queued - CONFIG.spillEvery);
      expect(restored).toBeLessThanOrEqual(queued + 3 * 5 + CONFIG.spillEvery);
      expect(waiting).toBe(restored - CONFIG.queue);
    }, 480_000);

    it('seeds its random source from pico_rand: two boots on the ring oscillator\'s random bits try to connect at different times', async () => {
      // Every exchange makes a classic Socket (xs_socket) and fails at once. Command polls and the lookup
      // keep a fixed pace; the flushes wait the start jitter, then the backoff, both drawn from the seed.
      const watch = symbolAddress((sdk as PicoSdk).gccRoot, offline.elf, 'xs_socket');
      const boots = [0, 1].map(() => new Rp2040Run(bootrom as string, offline.uf2, undefined, { entropy: true, watch }));
      try {
        const CALLS = 8;
        const end = Date.now() + 280_000;
        while (boots.some((b) => b.calls.length < CALLS) && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 500));
        const [a, b] = boots.map((boot) => boot.calls.slice(0, CALLS).map((ms) => Math.round(ms)));
        expect(a, 'connection attempts of the first boot').toHaveLength(CALLS);
        expect(b, 'connection attempts of the second boot').toHaveLength(CALLS);
        console.log('chip ms of the connection attempts, boot 1: ' + a.join(', ') + '; boot 2: ' + b.join(', '));
        // The emulator is deterministic: the same image with the same bits would try at the same
        // nanosecond. Different bits of the ring oscillator must make different waits.
        expect(Math.max(...a.map((ms, i) => Math.abs(ms - b[i])))).toBeGreaterThan(100);
      } finally {
        for (const boot of boots) boot.stop();
      }
    }, 300_000);

    it('reads the identity provisioned beside an image built without one, from the sectors the UF2 writes, and never traces the token', async () => {
      // As a user copies the image's UF2 onto the board in BOOTSEL mode, then the device's own.
      const device = new Rp2040Run(bootrom as string, [unprovisioned.uf2, provisioning(PROVISIONED)], undefined, { stdout: serialOut() });
      run = device;
      const start = await device.waitFor(/^feed-agent: device /, 120_000);
      expect(device.lines[start]).toBe('feed-agent: device ' + PROVISIONED.publicKey + ' at ' + PROVISIONED.url +
        ': 3 sensors every 1000 ms, 1 command resource; not fed: rssi (this platform\'s Net reports no RSSI); provisioned: publicKey, token, url');
      // The agent's exchanges go to the provisioned URL (and fail at once: no network), the token with them.
      const status = await device.waitFor(/^feed-agent: queued [1-9].*last error: /, 180_000, start);
      expect(device.lines[status]).toContain('cannot connect to 127.0.0.2:8081');
      expect(device.lines.filter((l) => l.includes(PROVISIONED.token))).toEqual([]);
    }, 300_000);

    it('with no identity at all, says what is missing and waits (saying it again once a minute): no abort, no restart, no retry', async () => {
      // The line comes 3 ms after the boot, before any USB host can have opened the serial: read from the driver.
      const watch = symbolAddress((sdk as PicoSdk).gccRoot, unprovisioned.elf, 'isr_hardfault');
      const device = new Rp2040Run(bootrom as string, unprovisioned.uf2, undefined, { watch, stdout: serialOut() });
      run = device;
      const said = await device.waitFor(/^feed-agent: /, 120_000);
      const missing = (key: string): string => key + ': missing (provision the device: feed-agent provision; or add ' + key + '=… to the mcconfig line)';
      expect(device.lines[said]).toBe('feed-agent: config: ' + ['url', 'publicKey', 'token'].map(missing).join('; '));
      // Twice the status line's period (5 s) of the chip's time: nothing more from the firmware, and the
      // chip still runs (the SDK's instrumentation says so every second); a fault would enter isr_hardfault.
      await chipRuns(device, device.chipMs[said], 10_000, 180_000);
      const after = device.lines.slice(said + 1);
      expect(after.filter((l) => !l.startsWith('instruments: '))).toEqual([]);
      expect(after.length).toBeGreaterThanOrEqual(9);
      expect(device.calls).toEqual([]);
    }, 300_000);

    /** Past the radio that does not start, main runs and samples: its start line, then a status line with samples queued. */
    async function samplesWithoutRadio(device: Rp2040Run, start: string, password: string): Promise<void> {
      const failed = await device.waitFor(/^\[CYW43\] Failed to start CYW43$/, 120_000);
      const said = await device.waitFor(/^Wi-Fi: /, 60_000, failed);
      // The SDK brings the CYW43 up at the first join (cyw43_arch_wifi_connect_async): connect throws.
      expect(device.lines[said]).toBe('Wi-Fi: the radio did not start (connect failed -4): no network until a restart; the agent runs and keeps its readings');
      const started = await device.waitFor(/^feed-agent: device /, 60_000, said);
      expect(device.lines[started]).toBe(start);
      await device.waitFor(/^feed-agent: queued [1-9]/, 180_000, started);
      // One try of the radio, and no abort.
      expect(device.lines.filter((l) => l.includes('CYW43') || l.includes('Wi-Fi') || l.includes('XS abort'))).toEqual([device.lines[failed], device.lines[said]]);
      expect(device.lines.filter((l) => l.includes(password))).toEqual([]);
    }

    it('with ssid= finds the radio does not start (the CYW43 does not answer on its SPI bus), says so, and runs the agent: it samples', async () => {
      const device = new Rp2040Run(bootrom as string, withRadio.uf2);
      run = device;
      await samplesWithoutRadio(device, 'feed-agent: device ' + CONFIG.publicKey + ' at ' + CONFIG.url +
        ': 3 sensors every 1000 ms, 1 command resource; not fed: rssi (this platform\'s Net reports no RSSI)', 'test-password');
    }, 300_000);

    it('takes the network provisioned beside an image built without one to the radio, which does not start, then runs the agent, which samples', async () => {
      const device = new Rp2040Run(bootrom as string, [unprovisioned.uf2, provisioning(WITH_NETWORK)], undefined, { stdout: serialOut() });
      run = device;
      await samplesWithoutRadio(device, 'feed-agent: device ' + WITH_NETWORK.publicKey + ' at ' + WITH_NETWORK.url +
        ': 3 sensors every 1000 ms, 1 command resource; not fed: rssi (this platform\'s Net reports no RSSI); provisioned: publicKey, token, url, ssid, password', WITH_NETWORK.password as string);
    }, 300_000);
  });
});

describe.skipIf(typeof sdk === 'string' || typeof bootrom !== 'string')('peripherals from a description, on the Pico W\'s real IO in rp2040js', () => {
  const out = join(ROOT, 'node_modules', '.cache', 'feed-agent-pico-test');
  const app = join(ROOT, 'test', 'firmware', 'pico-peripherals');
  let image: PicoImage;
  let run: Rp2040Run | null = null;
  /** The description in app/manifest.json, as the test drives it. */
  const DOOR = 15, METER = 7, SOIL_ADC = 0, RELAY = 16, FAN_SLICE = 1;

  beforeAll(() => {
    image = buildPico(sdk as PicoSdk, ROOT, app, out, ['-i'], { ...CONFIG, resources: 'uptime:201,temperature:205' });
  }, 1_200_000);

  afterEach(() => {
    run?.stop();
    run = null;
  });

  it('feeds a contact, an SHT3x, an ADC channel and a pulse counter as described, drives a relay and PWM by command, and keeps the rest going while the SHT3x is gone', async () => {
    let part: Sht3xPart | undefined;
    const device = new Rp2040Run(bootrom as string, image.uf2, undefined, {
      setup: (chip) => {
        // The contact is open (the pull-up holds the pin high), the meter's line idle high.
        chip.gpio[DOOR].setInputValue(true);
        chip.gpio[METER].setInputValue(true);
        chip.adc.channelValues[SOIL_ADC] = 2048;
        chip.adc.channelValues[4] = ADC_27C;
        // GP4/GP5 are I2C0 (the SDK takes data on a pin 4n as port 0).
        part = new Sht3xPart(chip.i2c[0]);
      },
    });
    run = device;
    const chip = device.chip;
    const sht3x = part as Sht3xPart;
    /** The value of the first reading of `resource` from line `from` on that passes `ok`. */
    const reading = async (resource: number, from: number, ok: (v: number) => boolean = () => true): Promise<number> => {
      const pattern = new RegExp('^reading ' + resource + ' (-?[0-9.e+-]+)$');
      const end = Date.now() + 240_000;
      for (;;) {
        const i = await device.waitFor(pattern, Math.max(0, end - Date.now()), from);
        const v = Number(pattern.exec(device.lines[i])?.[1]);
        if (ok(v)) return v;
        from = i + 1;
      }
    };

    // One line names both mistakes of the description; the rest starts.
    const problems = await device.waitFor(/^feed-agent: peripherals: /, 120_000);
    // The driver the description's manifest includes is found by name; its part does not answer at boot.
    expect(device.lines[problems]).toBe('feed-agent: peripherals: radio: pin: pin 25 is the radio\'s chip select on the Pico W; co2: unknown driver "scd41" (this build has SHT3x, TMP117, BMP280; another of the SDK\'s: include its manifest, $(MODDABLE)/modules/drivers/sensors/<part>/manifest.json)');
    expect(device.lines.slice(0, problems).filter((l) => l.startsWith('feed-agent: '))).toEqual([expect.stringMatching(/^feed-agent: BMP280 at 0x76 on pins 4\/5 is not answering: (write|read) failed; trying again every 30 s$/)]);
    const start = /: 2 sensors every 1000 ms, 0 command resources; peripherals: (.*)$/.exec(device.lines[await device.waitFor(/^feed-agent: device /, 60_000)]);
    // mcconfig merges the description's entries in an order of its own.
    expect(start?.[1].split(', ').sort()).toEqual(['air', 'door', 'fan', 'humidity', 'irrigation', 'meter', 'pressure', 'soil']);
    const started = await device.waitFor(/^feed-agent: started$/, 60_000);
    expect(await reading(101, started)).toBe(0);
    expect(await reading(102, started)).toBe(Math.round(sht3xCelsius(21.5) * 100) / 100);
    expect(await reading(103, started)).toBe(Math.round(sht3xPercent(55) * 100) / 100);
    expect(await reading(104, started)).toBe(2048 * 0.025 - 2.5);
    expect(await reading(105, started)).toBe(0);
    // The temperature role reads ADC input 4 beside the probe's input 0: each read selects its own.
    expect(await reading(205, started)).toBe(27.1);
    // The relay starts at its stated level, the fan at its initial 25 %.
    expect(chip.gpio[RELAY].outputValue).toBe(false);
    const fan = () => chip.pwm.channels[FAN_SLICE];
    expect((fan().cc & 0xffff) / (fan().top + 1)).toBeCloseTo(0.25, 2);

    // Close the contact, pulse the meter 25 times, change the probe's voltage and the air.
    let from = device.lines.length;
    chip.gpio[DOOR].setInputValue(false);
    for (let i = 0; i < 25; i++) {
      chip.gpio[METER].setInputValue(false);
      chip.gpio[METER].setInputValue(true);
    }
    chip.adc.channelValues[SOIL_ADC] = 1000;
    sht3x.celsius = 18.25;
    sht3x.percent = 71.5;
    expect(await reading(101, from, (v) => v === 1)).toBe(1);
    expect(await reading(105, from, (v) => v > 0)).toBe(12.5);
    expect(await reading(104, from, (v) => v !== 48.7)).toBe(1000 * 0.025 - 2.5);
    expect(await reading(102, from, (v) => v < 20)).toBe(Math.round(sht3xCelsius(18.25) * 100) / 100);
    expect(await reading(103, from, (v) => v > 60)).toBe(Math.round(sht3xPercent(71.5) * 100) / 100);

    // A command from the UART, through the output's handler: the relay's pin follows, once each.
    from = device.lines.length;
    device.sendUart(1, '107 on\n');
    await device.waitFor(/^feed-agent: irrigation: pin 16 at 1 by command "on" \(feed 1\)$/, 120_000, from);
    expect(chip.gpio[RELAY].outputValue).toBe(true);
    device.sendUart(1, '106 75\n');
    await device.waitFor(/^feed-agent: fan: pin 18 at 75 by command "75" \(feed 2\)$/, 120_000, from);
    expect((fan().cc & 0xffff) / (fan().top + 1)).toBeCloseTo(0.75, 2);
    device.sendUart(1, '107 off\n');
    await device.waitFor(/^feed-agent: irrigation: pin 16 at 0 by command "off" \(feed 3\)$/, 120_000, from);
    expect(chip.gpio[RELAY].outputValue).toBe(false);
    expect(device.lines.slice(from).filter((l) => / by command /.test(l))).toHaveLength(3);

    // The SHT3x stops answering: said once, tried again every 3 s (retryMs), and the contact read on every second meanwhile.
    from = device.lines.length;
    sht3x.answering = false;
    const stopped = await device.waitFor(/^feed-agent: SHT3x at 0x44 on pins 4\/5 stopped answering: /, 120_000, from);
    expect(device.lines[stopped]).toMatch(/stopped answering: (write|read) failed; trying again every 3 s$/);
    const down = device.chipNow;
    await device.waitFor(/^reading 101 /, 120_000, stopped + 1);
    while (device.chipNow - down < 7_000) await new Promise((resolve) => setTimeout(resolve, 500));
    const meanwhile = device.lines.slice(stopped + 1);
    expect(meanwhile.filter((l) => l.startsWith('reading 101 ')).length).toBeGreaterThanOrEqual(5);
    expect(meanwhile.filter((l) => l.startsWith('reading 102 ') || l.startsWith('reading 103 '))).toEqual([]);
    expect(meanwhile.filter((l) => /stopped answering/.test(l))).toEqual([]);
    // The status line (every 5 s) names what does not answer: the SHT3x now, the BMP280 all along.
    expect(meanwhile.filter((l) => l.startsWith('feed-agent: queued ')).map((l) => /, not answering: ([^,]+, [^,]+),/.exec(l)?.[1])).toContain('SHT3x at 0x44 on pins 4/5, BMP280 at 0x76 on pins 4/5');
    sht3x.answering = true;
    const again = await device.waitFor(/^feed-agent: SHT3x at 0x44 on pins 4\/5 answers again, after \d+ failed tries$/, 120_000, stopped);
    expect(await reading(102, again)).toBe(Math.round(sht3xCelsius(18.25) * 100) / 100);
    // The failed reads were counted, not queued.
    const status = await device.waitFor(/^feed-agent: queued /, 120_000, again);
    expect(Number(/rejected (\d+)/.exec(device.lines[status])?.[1])).toBeGreaterThan(0);
  }, 900_000);
});
