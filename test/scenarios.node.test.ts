// The shared scenarios on Node: virtual clock, real HTTP to the local service through the fault proxy.
import { describe, it } from 'vitest';
import { scenarios } from './scenarios';
import { runScenario } from './scenarios/run';
import { nodeLink, withBackend } from './support/scenario-backend';

describe('scenarios on Node', () => {
  for (const scenario of scenarios) {
    it(scenario.name, () => withBackend((backend) => runScenario(scenario, nodeLink(backend), backend.url)));
  }
});
