// `npm run soak`: the long runs, ten minutes or so in all. SOAK_SEED=n replays a fault schedule, SOAK_MINUTES
// sets the length of the fault soak and of each liveness run (default 3). Each run prints what it saw, counted from the service's side;
// README.md's Guarantees section shows the latest fault soak.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildInto, workDir } from '../test/support/build';
import { killAll } from '../test/support/children';
import { faultSoakProblems, faultSoakText, runFaultSoak } from './faults';
import { livenessProblems, livenessText, runLiveness } from './liveness';
import { nodeOverload, overloadProblems, overloadText } from './overload';
import { revokeProblems, revokeText, runRevoke } from './revoke';
import { tallyTable } from './tally';

const SEED = Number(process.env.SOAK_SEED ?? Date.now() % 100_000);
const MINUTES = Number(process.env.SOAK_MINUTES ?? 3);
const work = workDir('soak-');
let cli = '';

beforeAll(() => {
  console.log(`soak: seed ${SEED} (SOAK_SEED=${SEED} npm run soak replays it)`);
  cli = buildInto(work.dir);
});
afterAll(() => {
  killAll();
  work.remove();
});

it(`fault soak, ${MINUTES} min (SOAK_SEED=${SEED})`, async () => {
  const report = await runFaultSoak({ seed: SEED, createOneIn: 7, readOneIn: 10, durationMs: MINUTES * 60_000, outageMs: 10_000, cli, dir: work.dir });
  console.log(faultSoakText(report, tallyTable));
  expect(faultSoakProblems(report)).toEqual([]);
});

for (const lostAnswersOnly of [false, true]) {
  it(`liveness, ${MINUTES} min under ${lostAnswersOnly ? 'lost answers only' : 'the fault mix of issue 15'}, 5 s of drain (SOAK_SEED=${SEED})`, async () => {
    const report = await runLiveness({ seed: SEED, durationMs: MINUTES * 60_000, drainMs: 5_000, lostAnswersOnly, cli, dir: work.dir });
    console.log(livenessText(report, tallyTable));
    expect(livenessProblems(report)).toEqual([]);
  });
}

it('token revoked for 30 s, then restored', async () => {
  const report = await runRevoke({ beforeMs: 10_000, revokedMs: 30_000, afterMs: 10_000, cli, dir: work.dir });
  console.log(revokeText(report, tallyTable));
  expect(revokeProblems(report)).toEqual([]);
});

it('overload: a million samples into a queue of 1,024, on Node and on XS', async () => {
  const node = await nodeOverload(1_000_000, 20, work.dir);
  // Only now the XS harness, and its lockdown of this process (overload-xs.ts): the runs above are done.
  const { xsOverload } = await import('./overload-xs');
  const xs = await xsOverload(1_000_000, 10);
  console.log(overloadText(node, xs));
  expect(overloadProblems(node, xs)).toEqual([]);
});
