// Overload on XS (overload.ts has the run on Node and the checks of both): the agent in the xsnap worker,
// a queue of 1,024 whose batch the service never answers, sample after sample; its live slots after gc()
// must not move from one step to the next. A module of its own, imported only where it runs: the XS
// harness locks its process down with SES (@endo/init), and the Node parts must not run locked down.
import { DEVICE as SCENARIO_DEVICE, R } from '../test/scenarios/seed';
import { withBackend } from '../test/support/scenario-backend';
import { liveSlots, XsWorker } from '../test/xs/harness';

export interface XsOverloadReport {
  samples: number;
  /**
   * Live slots each step left behind, beyond what a step that records nothing leaves (the harness keeps
   * a slot per evaluation): the first step fills the queue and sends its batch, every later one must add 0.
   */
  added: number[];
  /** XS compute per sample of the last step (every sample evicts one, behind the batch in flight). */
  computePerSample: number;
  /** The agent's counts after the last step. */
  counts: { accepted: number; queued: number; droppedOverflow: number };
}

/** `samples` readings, in `steps` evaluations, into the agent on XS; its one batch is never answered. */
export async function xsOverload(samples: number, steps: number): Promise<XsOverloadReport> {
  return withBackend(async (backend) => {
    const worker = await XsWorker.load('overload', new URL('../test/xs/overload-entry.ts', import.meta.url));
    backend.serve(worker);
    try {
      await worker.call('overload.start', { url: backend.url, publicKey: SCENARIO_DEVICE.publicKey, token: SCENARIO_DEVICE.token, resource: R.counterA });
      const step = samples / steps;
      let counts = { accepted: 0, queued: 0, droppedOverflow: 0 };
      let compute = 0;
      const record = async (from: number, count: number): Promise<number> => {
        const { reply, meter } = await worker.invoke('overload.record', R.counterA, from, count);
        counts = (JSON.parse(reply) as { ok: typeof counts }).ok;
        compute = meter.compute;
        return liveSlots(worker);
      };
      const started = await liveSlots(worker);
      const harness = (await record(0, 0)) - started;
      const added: number[] = [];
      let before = started + harness;
      for (let s = 0; s < steps; s++) {
        const after = await record(s * step, step);
        added.push(after - before - harness);
        before = after;
      }
      return { samples, added, computePerSample: Math.round(compute / step), counts };
    } finally {
      await worker.close();
    }
  });
}
