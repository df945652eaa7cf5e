// The shared scenarios inside the real XS engine: the agent, its clock and the scenario code run in one
// xsnap worker; every request crosses to Node through issueCommand and goes to the same service and proxy.
import { afterAll, beforeAll, describe, it } from 'vitest';
import { scenarios } from '../scenarios';
import type { Command } from '../scenarios/protocol';
import { withBackend } from '../support/scenario-backend';
import { XsWorker } from './harness';

let worker: XsWorker;

beforeAll(async () => {
  worker = await XsWorker.load('scenarios', new URL('./scenario-entry.ts', import.meta.url));
});

afterAll(() => worker?.close());

describe('scenarios on XS', () => {
  for (const scenario of scenarios) {
    it(scenario.name, () =>
      withBackend(async (backend) => {
        worker.onCommand = (message) => backend.handle(message as Command);
        await worker.call('runScenario', scenario.name, backend.url);
      }),
    );
  }
});
