// Bundled into the XS worker for scenarios.xs.test.ts: the scenarios, the agent and the harness's XS side.
import { scenarios } from '../scenarios';
import { runScenario } from '../scenarios/run';
import { settled, xsLink } from './host';

(globalThis as { runScenario?: unknown }).runScenario = (name: string, url: string) => {
  const scenario = scenarios.find((s) => s.name === name);
  return settled(scenario === undefined ? Promise.reject(new Error('no scenario named ' + name)) : runScenario(scenario, xsLink, url));
};
