// The crash test: a simulator with a durable queue and counter sensors is killed with SIGKILL at random
// moments, ten times, and started again each time; a last run stops on its own. Counters resume one past
// the highest value accepted (the ledger beside the queue), so the service must then hold every value
// from 0 to that highest one for each counter: no gap at all. A batch in flight at a kill is read back
// after the restart (the durable queue keeps it), so nothing is stored twice unless a run counted it
// unresolved; and any repeats come at most one run per kill.
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { createRandom } from '../../src/core/host/random';
import { startService } from '../../src/service';
import { tally } from '../../soak/tally';
import { readBacksIn, unresolvedIn } from '../support/delivery-log';
import { COUNTERS, counterConfig, deviceEnv, runSim, SEED, Sim, storedFeeds, withBuiltCli } from './support';

const KILLS = 10;
const BATCH = 25;
const SEED_NUMBER = Number(process.env.CRASH_SEED ?? Date.now() % 100_000);

const work = withBuiltCli('e2e-crash-');

it(`keeps every accepted counter value through ${KILLS} kills (CRASH_SEED=${SEED_NUMBER})`, async () => {
  const dbFile = join(work.dir, 'crash.db');
  const service = await startService({ seed: SEED, dbFile });
  const durable = join(work.dir, 'durable');
  const config = counterConfig(work.dir, 'crash.json', 10, { uplink: { batch: BATCH, flushMs: 50, maxLatencyMs: 100 } });
  const env = deviceEnv(service.url);
  const args = ['--config', config, '--durable', durable, '--json'];
  const random = createRandom(SEED_NUMBER);
  const restored: number[] = [];
  const restoredBy = (sim: Sim) =>
    sim.all('log').reduce((n, e) => n + Number(/^restored (\d+) unacknowledged samples/.exec(e.message)?.[1] ?? 0), 0);
  const messages = (sim: Sim) => sim.all('log').map((e) => e.message as string);
  const unresolved: number[] = [];
  const unresolvedBy = (sim: Sim) => unresolvedIn(messages(sim));
  // Batches out at a kill that the next run read back, and how many of their samples it found stored.
  const readBack = { batches: 0, stored: 0 };
  const readBackBy = (sim: Sim) => {
    const r = readBacksIn(messages(sim));
    readBack.batches += r.batches;
    readBack.stored += r.stored;
  };
  try {
    for (let kill = 0; kill < KILLS; kill++) {
      const sim = new Sim(work.cli(), args, env);
      // Anywhere from still loading to sampling and sending for a while.
      await new Promise((resolve) => setTimeout(resolve, 200 + Math.floor(random() * 1300)));
      sim.kill('SIGKILL');
      expect(await sim.exited, 'run ' + kill + ' was killed, it did not exit:\n' + sim.stderr).toBeNull();
      restored.push(restoredBy(sim));
      unresolved.push(unresolvedBy(sim));
      readBackBy(sim);
    }
    const last = await runSim(work.cli(), [...args, '--duration', '1.5'], env);
    expect(last.code, last.sim.stderr).toBe(0);
    restored.push(restoredBy(last.sim));
    unresolved.push(unresolvedBy(last.sim));
    readBackBy(last.sim);
    expect(unresolved[KILLS], 'the last run\'s unresolved, from its log and its summary').toBe(last.sim.all('summary')[0].unresolved);
    expect(last.sim.all('summary')[0]).toMatchObject({ ok: true, queued: 0 });
  } finally {
    await service.close();
  }

  const feeds = storedFeeds(dbFile);
  const rows = tally(dbFile, durable, COUNTERS);
  const all = rows.pop()!;
  for (const row of rows) {
    // Every value from 0 to the highest accepted one, first seen in order, and no other.
    expect(row, 'values of ' + row.resource).toMatchObject({ lost: 0, foreign: 0, inOrder: true });
    // tally reads a counter missing from the ledger as one that accepted nothing.
    expect(row.accepted, 'values of ' + row.resource).toBeGreaterThan(0);
  }
  // Every stored feed is a counter's.
  expect(all.stored).toBe(feeds.length);
  // Runs of repeated feeds, in the order stored: at most one per kill.
  const seen = new Set<string>();
  let episodes = 0;
  let previousWasDuplicate = false;
  for (const feed of feeds) {
    const key = feed.resource + ':' + feed.value;
    const duplicate = seen.has(key);
    seen.add(key);
    if (duplicate && !previousWasDuplicate) episodes++;
    previousWasDuplicate = duplicate;
  }
  expect(episodes).toBeLessThanOrEqual(KILLS);
  // A batch out at a kill is read back after the restart: nothing is stored twice unless it was counted unresolved.
  const counted = unresolved.reduce((a, b) => a + b, 0);
  expect(all.duplicated, 'duplicates against the samples counted unresolved, per run: ' + unresolved.join(' ')).toBeLessThanOrEqual(counted);
  // The kills did land with samples still unacknowledged, which the next run sent.
  expect(restored.some((n) => n > 0)).toBe(true);
  console.log(
    `crash test (CRASH_SEED=${SEED_NUMBER}): ${KILLS} kills, ${rows.map((r) => r.accepted).join(' + ')} values, ` +
      `${all.duplicated} duplicates in ${episodes} runs (${counted} counted unresolved), ` +
      `${readBack.batches} batches out at a kill read back (${readBack.stored} samples found stored), restored per start: ${restored.join(' ')}`,
  );
});
