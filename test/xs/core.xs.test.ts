// The core's parts on the real XS engine, and the property of delivery: every probe must give on XS
// exactly what it gives on Node (where the property's runs break no guarantee, test/core/property.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { XsWorker } from './harness';
import { probes } from './probes';

let worker: XsWorker;

beforeAll(async () => {
  worker = await XsWorker.load('core-probes', new URL('./probe-entry.ts', import.meta.url));
});

afterAll(() => worker?.close());

describe('core parts on XS', () => {
  for (const name of Object.keys(probes)) {
    it(name + ' gives the same answer as on Node', async () => {
      const onNode = JSON.parse(JSON.stringify(await probes[name]())) as unknown;
      expect(await worker.call('runProbe', name)).toEqual(onNode);
    });
  }
});
