// One scenario run, the same on both engines: build the context, run the scenario, check what every
// scenario must hold, and on failure say what the agent did (its requests and its log).
import { createContext } from './context';
import type { ScenarioContext } from './context';
import type { Link } from './protocol';

export interface Scenario {
  name: string;
  run(ctx: ScenarioContext): Promise<void>;
}

/** Runs one scenario against the proxy at `url`; rejects with an Error that tells the story. */
export async function runScenario(scenario: Scenario, link: Link, url: string): Promise<void> {
  const ctx = createContext(link, url);
  try {
    await scenario.run(ctx);
    const leak = ctx.logs.find((line) => line.indexOf(ctx.token) >= 0);
    if (leak !== undefined) throw new Error('the token appears in the log: ' + leak.replace(ctx.token, '<token>'));
  } catch (e) {
    const message = e instanceof Error ? e.name + ': ' + e.message : String(e);
    throw new Error(message + '\n' + story(ctx));
  }
}

function story(ctx: ScenarioContext): string {
  const requests = ctx.requests
    .slice(-30)
    .map((r) => '  t=' + r.t + ' ' + r.method + ' ' + r.path.split('?')[0] + (r.elements > 0 ? ' [' + r.elements + ']' : '') + ' → ' + r.outcome + ' at ' + r.end);
  const logs = ctx.logs.slice(-20).map((line) => '  ' + line);
  return 'virtual time ' + ctx.clock.now() + '\nlast requests:\n' + requests.join('\n') + '\nlast log lines:\n' + logs.join('\n');
}
