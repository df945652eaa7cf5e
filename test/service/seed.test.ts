// The seed format: its checks name the bad field; applying a seed again to a database keeps feeds,
// counters and ids, and changes a record (and its updated_at) only where the seed changed it. The demo
// fleet is a seed too: the demo device and copies of it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkSeed, createService, DEMO_PUBLIC_KEY, DEMO_RESOURCES, DEMO_SEED, DEMO_TOKEN, demoFleetDevice, demoFleetSeed, MAX_DEMO_DEVICES, parseSeed, SeedError, startService } from '../../src/service';
import type { Seed } from '../../src/service';
import { device } from '../support/client';
import { A, SEED } from './fixtures';

const work = mkdtempSync(join(tmpdir(), 'service-seed-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function variant(change: (seed: Record<string, any>) => void): unknown {
  const seed = structuredClone(SEED) as unknown as Record<string, any>;
  change(seed);
  return seed;
}

describe('checkSeed', () => {
  it('names the field of the first problem', () => {
    const cases: [unknown, string][] = [
      [[], 'seed: seed must be an object'],
      [{ subtypes: [] }, 'seed: seed.devices is missing'],
      [variant((s) => (s.extra = 1)), 'seed: seed.extra is not a field of the seed format'],
      [variant((s) => delete s.subtypes[1].name), 'seed: subtypes[1].name is missing'],
      [variant((s) => (s.subtypes[0].data_restriction_end_range = '1')), 'seed: subtypes[0].data_restriction_end_range must be an integer'],
      [variant((s) => (s.subtypes[0].data_restriction_begin_range = 2)), 'seed: subtypes[0].data_restriction_begin_range is greater than data_restriction_end_range'],
      [variant((s) => (s.subtypes[2].data_restriction_regex = '(on')), 'seed: subtypes[2].data_restriction_regex does not compile'],
      [variant((s) => (s.subtypes[1].id_resource_subtype = 3)), 'seed: subtypes[1].id_resource_subtype 3 appears twice'],
      [variant((s) => (s.devices[1].public_key = s.devices[0].public_key)), `seed: devices[1].public_key "${A.key}" appears twice`],
      [variant((s) => (s.devices[0].public_key = 'has/slash')), 'seed: devices[0].public_key must be 1 to 128 of the characters'],
      [variant((s) => (s.devices[1].token = '')), 'seed: devices[1].token must be 1 to 512 visible ASCII characters'],
      [variant((s) => (s.devices[0].resources[2].lifetime = -1)), 'seed: devices[0].resources[2].lifetime must be an integer ≥ 0'],
      [variant((s) => (s.devices[0].resources[0].id_resource = 1.5)), 'seed: devices[0].resources[0].id_resource must be an integer ≥ 1'],
      [variant((s) => (s.devices[1].resources[0].id_resource = 73)), 'seed: devices[1].resources[0].id_resource 73 appears twice'],
      [variant((s) => (s.devices[1].resources[0].id_resource_subtype = 4)), 'seed: devices[1].resources[0].id_resource_subtype 4 is not among the seed'],
      [variant((s) => (s.command_types = [2, 'actuator'])), 'seed: command_types[1] must be an integer ≥ 1 (an id_resource_type)'],
      [variant((s) => (s.command_types = 2)), 'seed: seed.command_types must be an array'],
    ];
    for (const [value, message] of cases) expect(() => checkSeed(value), message).toThrow(message);
  });

  it('keeps the secret out of its messages', () => {
    const secret = 'top secret token';
    expect(() => checkSeed(variant((s) => (s.devices[0].token = secret)))).toThrow(/token must be/);
    try {
      checkSeed(variant((s) => (s.devices[0].token = secret)));
    } catch (error) {
      expect((error as Error).message).not.toContain(secret);
    }
  });

  it('says where a file stops being JSON, and never quotes it: an unquoted token stays out of the message', () => {
    const secret = 'NEWTOKEN0123456789';
    const file = JSON.stringify(SEED, null, 2).replace(`"token": "${A.token}"`, `"token": ${secret}`);
    expect(file).toContain(secret);
    const line = file.split('\n').findIndex((l) => l.includes(secret)) + 1;
    expect(() => parseSeed(file)).toThrow(
      new SeedError(`seed: not JSON at line ${line}, column 16: expected a value after the property name: a string, a number, an object, an array, true, false or null`),
    );
    for (const [text, where] of [
      ['{"subtypes": [', 'line 1, column 15: the text ends too soon'],
      ['{"subtypes": [],\r\n "devices": [}', "line 2, column 14: expected a value in the array: a string, a number, an object, an array, true, false or null"],
      ['', 'line 1, column 1: the text is empty'],
    ]) {
      expect(() => parseSeed(text), text).toThrow(new SeedError(`seed: not JSON at ${where}`));
    }
  });

  it('fills the optional fields and reads the example of docs/service.md', () => {
    const example = parseSeed(`{
      "subtypes": [
        {"id_resource_subtype": 3, "id_resource_type": 1, "name": "Binário", "name_i18n": "Binary",
         "description": null, "data_format_operation": 0, "data_restriction_regex": null,
         "data_restriction_begin_range": 0, "data_restriction_end_range": 1}
      ],
      "devices": [
        {"public_key": "5D4161963252F0EABB435339", "token": "2A192A93FA7E383AE98803C7", "name": "Test Device",
         "resources": [
           {"id_resource": 73, "id_resource_subtype": 3, "name": "Input Binary Resource",
            "description": "", "lifetime": 15}
         ]}
      ]
    }`);
    expect(example.devices[0].resources[0]).toEqual({ id_resource: 73, id_resource_subtype: 3, name: 'Input Binary Resource', description: '', lifetime: 15 });
    const minimal = checkSeed({
      subtypes: [{ id_resource_subtype: 1, id_resource_type: 1, name: 'N', data_restriction_begin_range: 0, data_restriction_end_range: 9 }],
      devices: [{ public_key: 'K', token: 'T', resources: [{ id_resource: 1, id_resource_subtype: 1, name: 'R', lifetime: 1 }] }],
    });
    expect(minimal.subtypes[0]).toEqual({
      id_resource_subtype: 1,
      id_resource_type: 1,
      name: 'N',
      name_i18n: 'N',
      description: null,
      data_format_operation: 0,
      data_restriction_regex: null,
      data_restriction_begin_range: 0,
      data_restriction_end_range: 9,
    });
    expect(minimal.devices[0]).toMatchObject({ name: '', resources: [{ description: '' }] });
    expect(checkSeed(DEMO_SEED)).toEqual(DEMO_SEED);
  });
});

describe('applying seeds', () => {
  it('without a seed, serves the demo device and says so; with one, not', async () => {
    const demo = await startService();
    try {
      expect(demo.demo).toEqual({ publicKey: DEMO_PUBLIC_KEY, token: DEMO_TOKEN, resources: DEMO_RESOURCES });
      const api = device(demo.url, DEMO_PUBLIC_KEY, DEMO_TOKEN);
      const records = (await api.getResources(DEMO_RESOURCES.join(','))).json.payload;
      expect(records.map((r: { id_resource: number }) => r.id_resource)).toEqual(DEMO_RESOURCES);
      // Every demo resource takes a value, as a simulator would send it.
      const values: Record<number, unknown> = { 101: 1, 102: 21.5, 103: 55, 104: 40, 105: 123456, 106: 'on', 107: 0, 108: 18 };
      const created = await api.createFeeds(DEMO_RESOURCES.map((id) => ({ id_resource: id, input: values[id] })));
      expect(created.status).toBe(200);
    } finally {
      await demo.close();
    }
    const seeded = await startService({ seed: SEED });
    expect(seeded.demo).toBeUndefined();
    await seeded.close();
  });

  it('a demo fleet is the demo device and copies of it, each with its own key, token and resources', async () => {
    const seed = demoFleetSeed(1000);
    expect(checkSeed(seed)).toEqual(seed);
    expect(demoFleetSeed(1)).toEqual(DEMO_SEED);
    expect(demoFleetDevice(0)).toEqual({ publicKey: DEMO_PUBLIC_KEY, token: DEMO_TOKEN, resources: DEMO_RESOURCES });
    expect(new Set(seed.devices.map((d) => d.public_key)).size).toBe(1000);
    expect(new Set(seed.devices.map((d) => d.token)).size).toBe(1000);
    seed.devices.forEach((d, k) => {
      expect({ publicKey: d.public_key, token: d.token, resources: d.resources.map((r) => r.id_resource) }).toEqual(demoFleetDevice(k));
    });
    for (const n of [0, 1.5, MAX_DEMO_DEVICES + 1]) expect(() => demoFleetSeed(n)).toThrow(RangeError);

    const fleet = await startService({ demoDevices: 3 });
    try {
      expect(fleet.demo).toEqual(demoFleetDevice(0));
      const third = demoFleetDevice(2);
      const api = device(fleet.url, third.publicKey, third.token);
      expect((await api.createFeeds([{ id_resource: 302, input: 21.5 }])).status).toBe(200);
      expect((await api.createFeeds([{ id_resource: 202, input: 21.5 }])).status).toBe(404);
      expect((await device(fleet.url, DEMO_PUBLIC_KEY, third.token).createFeed(102, 21.5)).status).toBe(401);
    } finally {
      await fleet.close();
    }
    expect(() => createService({ seed: SEED, demoDevices: 2 })).toThrow('give a seed or demoDevices, not both');
  });

  it('a seed applied again to a database keeps feeds, counters and ids, and moves updated_at only where it changed', async () => {
    const dbFile = join(work, 'reseed.db');
    let now = Date.UTC(2024, 0, 1);
    const first = await startService({ seed: SEED, dbFile, now: () => now });
    const created = await device(first.url, A.key, A.token).createFeed(74, 30);
    await first.close();

    now = Date.UTC(2024, 0, 2);
    const renamed = variant((s) => (s.devices[0].resources[1].name = 'Bench Temperature')) as Seed;
    const second = await startService({ seed: renamed, dbFile, now: () => now });
    try {
      const [r73, r74] = (await device(second.url, A.key, A.token).getResources('73,74', '?silent=true')).json.payload;
      expect(r74).toMatchObject({
        name: 'Bench Temperature',
        id_device: 1,
        id_last_feed: created.json.payload.id_resource_feed,
        api_requests_usage: 2,
        created_at: '2024-01-01 00:00:00',
        updated_at: '2024-01-02 00:00:00',
      });
      expect(r73).toMatchObject({ name: 'Input Binary Resource', updated_at: '2024-01-01 00:00:00', api_requests_usage: 1 });
      expect(r74.subtype.updated_at).toBe('2024-01-01 00:00:00');
    } finally {
      await second.close();
    }

    const stolen = variant((s) => (s.devices[1].resources[0].id_resource = 75)) as Seed;
    stolen.devices[0].resources.pop();
    await expect(startService({ seed: stolen, dbFile })).rejects.toThrow(`seed: resource 75 already belongs to device ${A.key} in the database`);
  });
});
