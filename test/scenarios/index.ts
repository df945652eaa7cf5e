// Every scenario, written once; test/scenarios.node.test.ts runs them on Node, test/xs/scenarios.xs.test.ts on XS.
import { backlogScenarios } from './backlog';
import { commandScenarios } from './commands';
import { deliveryScenarios } from './delivery';
import { exceptionScenarios } from './exception';
import { failureScenarios } from './failures';
import { flushScenarios } from './flush';
import { isolationScenarios } from './isolation';
import { lifecycleScenarios } from './lifecycle';
import { overflowScenarios } from './overflow';
import { politenessScenarios } from './politeness';
import { presenceScenarios } from './presence';
import { reconcileScenarios } from './reconcile';
import { restartScenarios } from './restart';
import { validationScenarios } from './validation';
import type { Scenario } from './run';

export const scenarios: Scenario[] = [
  ...flushScenarios,
  ...failureScenarios,
  ...reconcileScenarios,
  ...restartScenarios,
  ...isolationScenarios,
  ...overflowScenarios,
  ...backlogScenarios,
  ...exceptionScenarios,
  ...validationScenarios,
  ...commandScenarios,
  ...presenceScenarios,
  ...lifecycleScenarios,
  ...deliveryScenarios,
  ...politenessScenarios,
];
