// The seeded liveness runs (soak/liveness.ts), short: the simulator against the fault mix that once
// stalled delivery for 30 s after each unknown outcome, at the agent's default reconciliation. Everything
// is stored within the run and 5 s of drain; with only lost answers, nothing twice. `npm run soak` runs them long.
import { expect, it } from 'vitest';
import { livenessProblems, livenessText, runLiveness } from '../../soak/liveness';
import { tallyTable } from '../../soak/tally';
import { withBuiltCli } from './support';

const SEED = Number(process.env.SOAK_SEED ?? 15);
const work = withBuiltCli('e2e-liveness-');

for (const lostAnswersOnly of [false, true]) {
  it(`stores everything within the run and 5 s of drain under ${lostAnswersOnly ? 'lost answers only, nothing twice' : 'the fault mix'} (SOAK_SEED=${SEED})`, async () => {
    const report = await runLiveness({ seed: SEED, durationMs: 10_000, drainMs: 5_000, lostAnswersOnly, cli: work.cli(), dir: work.dir });
    console.log(livenessText(report, tallyTable));
    expect(livenessProblems(report)).toEqual([]);
  }, 60_000);
}
