// The Moddable adapter on stand-ins for the SDK (scenarios.ts), on Node: against the real local service
// through the fault proxy, as the same scenarios run inside XS (test/xs/adapter.xs.test.ts).
import { describe, it } from 'vitest';
import { adapterOnNode } from '../../support/scenario-backend';
import { adapterScenarios } from '../scenarios';

describe('the Moddable adapter on Node', () => {
  for (const scenario of adapterScenarios) {
    it(scenario.name, () => adapterOnNode(scenario));
  }
});
