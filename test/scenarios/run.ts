// One scenario run, the same on both engines: build the context, run the scenario, check what every
// scenario must hold, and on failure say what the agent did (its requests and its log).
import { createContext } from './context';
import type { ScenarioContext } from './context';
import type { Link } from './protocol';

export interface Scenario {
  name: string;
  run(ctx: ScenarioContext): Promise<void>;
}

/** What the agent did, request by request: `[t, end, op, elements, outcome]`, then the final virtual time. */
export type Timeline = (string | number)[][];

/**
 * Runs one scenario against the proxy at `url`; rejects with an Error that tells the story. Resolves
 * with the timeline, which must be the same on every engine.
 */
export async function runScenario(scenario: Scenario, link: Link, url: string): Promise<Timeline> {
  const ctx = createContext(link, url);
  try {
    await scenario.run(ctx);
    // Every scenario stops its agents: a timer still armed is one a stopped agent leaked.
    if (ctx.clock.pending > 0) throw new Error(ctx.clock.pending + ' timers still armed at the end');
    const leak = ctx.logs.find((line) => line.indexOf(ctx.token) >= 0);
    if (leak !== undefined) throw new Error('the token appears in the log: ' + leak.replace(ctx.token, '<token>'));
    return ctx.requests.map((r) => [r.t, r.end, r.op, r.elements, r.outcome]).concat([[ctx.clock.now()]]);
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
