// What every soak run stands on: the local service on a fresh database file, the fault proxy in front of
// it, and the simulated device behind the proxy; all torn down after the run, then the service's file
// counted (tally.ts).
import { startService } from '../src/service';
import { COUNTERS, deviceEnv, SEED, Sim } from '../test/e2e/support';
import { FaultProxy } from '../test/support/fault-proxy';
import { tally } from './tally';
import type { Tally } from './tally';

export interface Rig {
  proxy: FaultProxy;
  /** Starts `feed-agent` (the built CLI `cli`) with `args`, talking to the service through the proxy. */
  simulate(cli: string, args: string[]): Sim;
}

/** Runs `run` on a fresh rig; `durable` is the simulator's durable queue, counted with the service's file. */
export async function onRig<R extends object>(dbFile: string, durable: string, run: (rig: Rig) => Promise<R>): Promise<R & { tallies: Tally[] }> {
  const service = await startService({ seed: SEED, dbFile });
  let proxy: FaultProxy | null = null;
  const sims: Sim[] = [];
  let report: R;
  try {
    const p = (proxy = await FaultProxy.start(service.url));
    report = await run({
      proxy: p,
      simulate: (cli, args) => {
        const sim = new Sim(cli, args, deviceEnv(p.url));
        sims.push(sim);
        return sim;
      },
    });
  } finally {
    for (const sim of sims) sim.kill('SIGKILL');
    await proxy?.close();
    await service.close();
  }
  // The service is closed: its file holds everything it answered 200 for.
  return { ...report, tallies: tally(dbFile, durable, COUNTERS) };
}
