// The Moddable adapter's scenarios inside the real XS engine, in the device realm (frozen built-ins,
// modules left as preload leaves them): the adapter, the core and the SDK stand-ins run in one xsnap
// worker; connections and the disk are Node's, reached through issueCommand. Each must see on XS what
// it sees on Node.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adapterScenarios } from '../moddable/scenarios';
import { adapterOnNode, withBackend } from '../support/scenario-backend';
import { XsWorker } from './harness';

let worker: XsWorker;

beforeAll(async () => {
  worker = await XsWorker.load('adapter', new URL('./adapter-entry.ts', import.meta.url));
});

afterAll(() => worker?.close());

describe('the Moddable adapter on XS', () => {
  for (const scenario of adapterScenarios) {
    it(scenario.name, async () => {
      const onXs = await withBackend((backend) => {
        backend.serve(worker);
        return worker.call('runAdapterScenario', scenario.name, backend.url);
      });
      expect(onXs, 'what the scenario saw on XS and on Node').toEqual(await adapterOnNode(scenario));
    });
  }
});
