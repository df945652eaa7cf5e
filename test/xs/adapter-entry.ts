// Bundled into the XS worker for adapter.xs.test.ts: the Moddable adapter's scenarios on the SDK
// stand-ins, with requests and the disk reached through issueCommand.
import { runAdapterScenario } from '../moddable/context';
import { adapterScenarios } from '../moddable/scenarios';
import { settled, xsDisk, xsLink } from './host';

(globalThis as { runAdapterScenario?: unknown }).runAdapterScenario = (name: string, url: string) => {
  const scenario = adapterScenarios.find((s) => s.name === name);
  return settled(scenario === undefined ? Promise.reject(new Error('no adapter scenario named ' + name)) : runAdapterScenario(scenario, xsLink, xsDisk, url));
};
