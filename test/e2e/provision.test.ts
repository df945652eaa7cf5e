// `feed-agent provision` as users run it (the built CLI): one device from options, a fleet's CSV, both
// chips' files read back as each chip reads them, and bad input: one line per field, exit 2, nothing
// written, the token never printed.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { withBuiltCli } from './support';
import { readNvs } from '../support/nvs-read';
import { preferenceGet } from '../node/support/mod-preference';
import { uf2Blocks } from '../support/uf2-blocks';

const work = withBuiltCli('e2e-provision-');
const exec = promisify(execFile);
const run = (args: string[], env: Record<string, string> = {}) =>
  exec(process.execPath, [work.cli(), 'provision', ...args], { cwd: work.dir, env: { ...process.env, ...env } }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );

const KEYS = ['3C71BF5A9E02D4F86A1C7B30', '4D71BF5A9E02D4F86A1C7B31', '5E71BF5A9E02D4F86A1C7B32'];
const TOKEN = '9F4E1A7C2B5D8E3F60A1C4D7';

describe('feed-agent provision', () => {
  it('writes one ESP32\'s NVS partition image, the token from the environment, and says how to flash it', async () => {
    const result = await run(['--publicKey', KEYS[0], '--url', 'http://10.0.2.100', '--update', 'http://10.0.2.100/firmware', '--out', 'one.bin'], { FEED_AGENT_TOKEN: TOKEN });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('one.bin: ' + KEYS[0] + ', with token, url, update\nput it on the board: esptool.py --chip esp32 write_flash 0x9000 one.bin\n');
    const image = readFileSync(join(work.dir, 'one.bin'));
    expect(image.length).toBe(0x4000);
    expect(readNvs(image)).toEqual({ 'feed-agent': { publicKey: KEYS[0], token: TOKEN, url: 'http://10.0.2.100', update: 'http://10.0.2.100/firmware' } });
  });

  it('writes a file per row of a fleet\'s CSV, for the ESP32 and for the Pico W', async () => {
    const csv = join(work.dir, 'fleet.csv');
    writeFileSync(csv, 'publicKey,token,url,ssid,password\n' + KEYS.map((k) => k + ',' + TOKEN + ',https://iot.example.com,"Barn, north",correct horse').join('\n') + '\n');
    const esp = await run(['--fleet', csv, '--out', 'esp32']);
    expect(esp.code, esp.stderr).toBe(0);
    expect(readdirSync(join(work.dir, 'esp32')).sort()).toEqual(KEYS.map((k) => k + '.nvs.bin'));
    expect(readNvs(readFileSync(join(work.dir, 'esp32', KEYS[2] + '.nvs.bin')))['feed-agent']).toEqual({ publicKey: KEYS[2], token: TOKEN, url: 'https://iot.example.com', ssid: 'Barn, north', password: 'correct horse' });
    const pico = await run(['--target', 'pico', '--fleet', csv, '--out', 'pico']);
    expect(pico.code, pico.stderr).toBe(0);
    const { blocks, ignored } = uf2Blocks(readFileSync(join(work.dir, 'pico', KEYS[1] + '.uf2')));
    expect(ignored).toBe(0);
    const flash = new Uint8Array(2 * 1024 * 1024).fill(0xff);
    for (const block of blocks) flash.set(block.data, block.address - 0x10000000);
    for (const [field, value] of Object.entries({ publicKey: KEYS[1], token: TOKEN, ssid: 'Barn, north', password: 'correct horse' })) expect(preferenceGet(flash, 'feed-agent', field), field).toBe(value);
    expect(esp.stdout + pico.stdout).not.toContain(TOKEN);
  });

  it('refuses bad input with one line per field, exit 2, and writes nothing', async () => {
    const short = TOKEN.slice(0, 20);
    const result = await run(['--publicKey', 'ABC', '--token', short, '--url', 'iot.example.com', '--ssid', 'x'.repeat(33), '--out', 'bad.bin']);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([
      'feed-agent provision: publicKey: expected 24 hexadecimal digits, got 3 hexadecimal digits ("ABC")',
      'feed-agent provision: token: expected 24 hexadecimal digits, got 20 hexadecimal digits',
      'feed-agent provision: url: expected http(s)://host[:port][/path], without query or fragment, got "iot.example.com"',
      'feed-agent provision: ssid: 33 bytes, at most 32',
    ]);
    expect(result.stderr).not.toContain(short);
    expect(existsSync(join(work.dir, 'bad.bin'))).toBe(false);
    const csv = join(work.dir, 'bad.csv');
    writeFileSync(csv, 'publicKey,token,url\n' + KEYS[0] + ',' + TOKEN + ',http://a\n' + KEYS[1] + ',' + TOKEN + 'FF,http://a\n');
    const fleet = await run(['--fleet', csv, '--out', 'bad-fleet']);
    expect([fleet.code, fleet.stderr]).toEqual([2, 'feed-agent provision: ' + csv + ' line 3: token: expected 24 hexadecimal digits, got 26 hexadecimal digits\n']);
    expect(existsSync(join(work.dir, 'bad-fleet'))).toBe(false);
    const pico = await run(['--target', 'pico', '--publicKey', KEYS[0], '--token', TOKEN, '--url', 'http://' + 'h'.repeat(60) + '.example']);
    expect(pico.code).toBe(2);
    expect(pico.stderr).toMatch(/^feed-agent provision: url: \d+ bytes, at most 62 on the Pico W/);
  });
});
