// The Moddable adapter on stand-ins for the SDK (scenarios.ts), on Node: against the real local service
// through the fault proxy, as the same scenarios run inside XS (test/xs/adapter.xs.test.ts).
import { describe, expect, it } from 'vitest';
import { nodeLink, withBackend } from '../support/scenario-backend';
import { runAdapterScenario } from './context';
import { adapterScenarios } from './scenarios';

describe('the Moddable adapter on Node', () => {
  for (const scenario of adapterScenarios) {
    it(scenario.name, async () => {
      const seen = await withBackend((backend) => runAdapterScenario(scenario, nodeLink(backend), (op) => backend.disk.run(op), backend.url));
      expect(seen).toBeDefined();
    });
  }
});
