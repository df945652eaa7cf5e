// Provisioning's pure parts: the identity's checks (one line per bad field, the token's value never in
// one), a fleet's CSV, and the NVS partition image, read back the way ESP-IDF reads it: each page's and
// entry's CRC with zlib's crc32(data, 0xffffffff), as ESP-IDF's own NVS tool computes them; and, where an
// ESP-IDF tree is on this machine, by that tool itself.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkIdentity } from '../../platforms/node/provision/identity';
import { parseFleetCsv } from '../../platforms/node/provision/fleet-csv';
import { nvsImage } from '../../platforms/node/provision/nvs-image';
import { readNvs } from '../support/nvs-read';

const KEY = '3C71BF5A9E02D4F86A1C7B30';
const TOKEN = '9F4E1A7C2B5D8E3F60A1C4D7';

describe('checkIdentity', () => {
  it('takes a whole identity and leaves out what is not given', () => {
    expect(checkIdentity({ publicKey: KEY, token: TOKEN, url: 'http://10.0.2.100', ssid: '' })).toEqual({ identity: { publicKey: KEY, token: TOKEN, url: 'http://10.0.2.100' } });
  });

  it('names each bad field on a line of its own, and never repeats the token', () => {
    const token = TOKEN.slice(1);
    const { problems } = checkIdentity({ publicKey: KEY + 'AB', token, url: 'example.com', resources: 'uptime=201', ssid: 'x'.repeat(33), password: 'short', colour: 'red' }) as { problems: string[] };
    expect(problems).toEqual([
      'colour: not a field (fields: publicKey, token, url, resources, ssid, password, ca, update)',
      'publicKey: expected 24 hexadecimal digits, got 26 hexadecimal digits ("' + KEY + 'AB")',
      'token: expected 24 hexadecimal digits, got 23 hexadecimal digits',
      'url: expected http(s)://host[:port][/path], without query or fragment, got "example.com"',
      'ssid: 33 bytes, at most 32',
      'password: expected 8 to 63 characters (WPA2), got 5',
      'resources: expected role:id pairs, e.g. uptime:201,heap:202,command:204, got "uptime=201"',
    ]);
    expect(problems.join('\n')).not.toContain(token);
    expect((checkIdentity({ publicKey: KEY, token: 'not hex at all, secret!', url: 'http://a' }) as { problems: string[] }).problems).toEqual(['token: expected 24 hexadecimal digits, got a character that is not a hexadecimal digit']);
  });

  it('says what is missing', () => {
    expect(checkIdentity({})).toEqual({ problems: ['publicKey: missing', 'token: missing'] });
  });

  it('counts an SSID in bytes, as 802.11 does', () => {
    expect(checkIdentity({ publicKey: KEY, token: TOKEN, url: 'http://a', ssid: 'é'.repeat(16), password: '12345678' }).problems).toBeUndefined();
    expect(checkIdentity({ publicKey: KEY, token: TOKEN, url: 'http://a', ssid: 'é'.repeat(17) }).problems).toEqual(['ssid: 34 bytes, at most 32']);
  });
});

describe('parseFleetCsv', () => {
  it('gives one device per row, columns in any order, quoted fields included', () => {
    const csv = 'url,publicKey,token,ssid\r\nhttp://10.0.2.100,' + KEY + ',' + TOKEN + ',"Barn, north"\r\n\r\nhttp://10.0.2.100,' + KEY.replace('3C', '4D') + ',' + TOKEN + ',"say ""hi"""\n';
    const fleet = parseFleetCsv(csv, 'fleet.csv');
    expect(fleet.problems).toBeUndefined();
    expect((fleet.problems === undefined ? fleet.devices : []).map((d) => [d.line, d.identity.publicKey, d.identity.ssid])).toEqual([[2, KEY, 'Barn, north'], [4, KEY.replace('3C', '4D'), 'say "hi"']]);
  });

  it('names the file, the line and the field of every problem, and provisions nothing', () => {
    const csv = ['publicKey,token,url', KEY + ',' + TOKEN + ',http://a', KEY + ',' + TOKEN + ',http://b', 'ABC,' + TOKEN + ',http://c', KEY].join('\n');
    expect(parseFleetCsv(csv, 'fleet.csv')).toEqual({
      problems: [
        'fleet.csv line 3: publicKey ' + KEY + ' is also on line 2',
        'fleet.csv line 4: publicKey: expected 24 hexadecimal digits, got 3 hexadecimal digits ("ABC")',
        'fleet.csv line 5: 1 fields, the header has 3',
      ],
    });
    expect(parseFleetCsv('publicKey,tokn,url\n', 'f.csv')).toEqual({ problems: ['f.csv line 1: unknown column "tokn" (columns: publicKey, token, url, resources, ssid, password, ca, update)'] });
    expect(parseFleetCsv('publicKey,"token\n', 'f.csv')).toEqual({ problems: ['f.csv: a quote opened on line 1 is never closed'] });
    expect(parseFleetCsv('', 'f.csv').problems).toEqual(['f.csv: empty (expected a header row: publicKey,token,url,resources,ssid,password,ca,update)']);
  });
});

/** ESP-IDF's own NVS tool, where a tree of it is here (IDF_PATH, or ESP_ROOT/esp-idf). */
const idf = [process.env.IDF_PATH, process.env.ESP_ROOT && join(process.env.ESP_ROOT, 'esp-idf')].find((p) => p && existsSync(join(p, 'components/nvs_flash/nvs_partition_tool/nvs_tool.py')));

describe('nvsImage', () => {
  const identity = { publicKey: KEY, token: TOKEN, url: 'http://10.0.2.100/a/path/longer/than/one/entry/of/32/bytes', ssid: 'Grünhaus' };

  it('holds each string in the namespace, every CRC as ESP-IDF computes it, the other pages erased', () => {
    const image = nvsImage('feed-agent', identity, 0x4000);
    expect(image.length).toBe(0x4000);
    expect(readNvs(image)).toEqual({ 'feed-agent': identity });
    expect(image.subarray(4096).every((b) => b === 0xff)).toBe(true);
  });

  it('refuses a size NVS cannot use, a key longer than 15 bytes, a page too full', () => {
    expect(() => nvsImage('feed-agent', {}, 4096)).toThrow(/at least 8192/);
    expect(() => nvsImage('feed-agent', { aKeyOfSixteenBy: 'x', aKeyOfSixteenByt: 'x' }, 8192)).toThrow(/NVS key "aKeyOfSixteenByt": 1 to 15 bytes/);
    expect(() => nvsImage('feed-agent', { big: 'x'.repeat(3999), more: 'x'.repeat(100) }, 8192)).toThrow(/more than one page/);
  });

  it.skipIf(idf === undefined)('reads back with ESP-IDF\'s own NVS tool', () => {
    const dir = mkdtempSync(join(tmpdir(), 'nvs-'));
    writeFileSync(join(dir, 'nvs.bin'), nvsImage('feed-agent', identity, 0x4000));
    const tool = join(idf!, 'components/nvs_flash/nvs_partition_tool/nvs_tool.py');
    const run = spawnSync('python3', [tool, '-d', 'minimal', '-i', '-f', 'json', join(dir, 'nvs.bin')], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('"publicKey"');
    const text = spawnSync('python3', [tool, '-d', 'minimal', join(dir, 'nvs.bin')], { encoding: 'utf8' }).stdout;
    for (const [k, v] of Object.entries(identity)) expect(text).toContain('feed-agent:' + k + ' = ' + v);
  });
});
