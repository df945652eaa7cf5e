// The shared scenarios inside the real XS engine: the agent, its clock and the scenario code run in one
// xsnap worker; every request crosses to Node through issueCommand and goes to the same service and proxy.
// Each must pass, and the agent must make the same requests at the same virtual times as on Node.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scenarios } from '../scenarios';
import { runScenario } from '../scenarios/run';
import { nodeLink, withBackend } from '../support/scenario-backend';
import { XsWorker } from './harness';

let worker: XsWorker;

beforeAll(async () => {
  worker = await XsWorker.load('scenarios', new URL('./scenario-entry.ts', import.meta.url));
});

afterAll(() => worker?.close());

describe('scenarios on XS', () => {
  for (const scenario of scenarios) {
    it(scenario.name, async () => {
      const onXs = await withBackend((backend) => {
        backend.serve(worker);
        return worker.call('runScenario', scenario.name, backend.url);
      });
      const onNode = await withBackend((backend) => runScenario(scenario, nodeLink(backend), backend.url));
      expect(onXs, 'requests [t, end, op, elements, outcome] on XS and on Node').toEqual(onNode);
    });
  }
});
