// What a sample costs the agent on XS, in slots: nothing, whether it spills to the backlog and is read back
// (a window of 256 on a storage that holds a backlog) or report by exception holds it back. Each step is
// one evaluation without a collection in it, so the heap count it adds is every slot it allocated: steps
// of 1,000 and of 4,000 samples must add the same (what an evaluation and a second of virtual time cost),
// and after a collection the live slots must grow by no more than the harness's slot per evaluation.
import { afterEach, expect, it } from 'vitest';
import type { ReportConfig } from '../../src/core';
import { DEVICE, R } from '../scenarios/seed';
import { withBackend } from '../support/scenario-backend';
import { liveSlots, XsWorker } from './harness';

interface Counts {
  accepted: number;
  queued: number;
  backlog: number;
  sent: number;
  droppedOverflow: number;
  heldBack: number;
}

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

/** An agent in an XS worker (per-sample-entry.ts), against the real service; resolves once it has started. */
async function start(options: { backlog: boolean; reporting: ReportConfig[] }): Promise<XsWorker> {
  return new Promise((resolve, reject) => {
    void withBackend(async (backend) => {
      const worker = await XsWorker.load('per-sample', new URL('./per-sample-entry.ts', import.meta.url));
      backend.serve(worker);
      await worker.call('perSample.start', { url: backend.url, publicKey: DEVICE.publicKey, token: DEVICE.token, resource: R.counterA }, options);
      await new Promise<void>((done) => {
        close = async () => {
          await worker.close();
          done();
        };
        resolve(worker);
      });
    }).catch(reject);
  });
}

/** Slots one evaluation allocated (no collection in it), and its counts. */
async function step(worker: XsWorker, fn: string, ...args: unknown[]): Promise<{ slots: number; counts: Counts }> {
  const before = (await worker.evaluate('0')).meter.currentHeapCount;
  const { reply, meter } = await worker.invoke(fn, ...args);
  const outcome = JSON.parse(reply) as { ok?: Counts; error?: string };
  if (outcome.error !== undefined) throw new Error(outcome.error);
  return { slots: meter.currentHeapCount - before, counts: outcome.ok as Counts };
}

/**
 * After a step of `warm` readings that brings the agent to its steady state (a full window, a backlog
 * begun), steps of 1,000 and 4,000: the slots each allocated, and the live slots each left beyond the
 * harness's.
 */
async function steps(worker: XsWorker, warm: number): Promise<{ small: number; large: number; leftSmall: number; leftLarge: number; counts: Counts }> {
  await step(worker, 'perSample.record', R.counterA, 0, warm);
  let from = warm;
  const live0 = await liveSlots(worker);
  const small = await step(worker, 'perSample.record', R.counterA, from, 1_000);
  from += 1_000;
  const live1 = await liveSlots(worker);
  // What an evaluation leaves live in the harness (a slot or so), measured by a step that records nothing.
  await step(worker, 'perSample.record', R.counterA, from, 0);
  const live2 = await liveSlots(worker);
  const large = await step(worker, 'perSample.record', R.counterA, from, 4_000);
  const live3 = await liveSlots(worker);
  const harness = live2 - live1;
  return { small: small.slots, large: large.slots, leftSmall: live1 - live0 - harness, leftLarge: live3 - live2 - harness, counts: large.counts };
}

it('spills to the backlog and reads it back without allocating per sample', async () => {
  const worker = await start({ backlog: true, reporting: [] });
  const spills = await steps(worker, 1_000);
  expect(spills.counts).toMatchObject({ accepted: 6_000, queued: 6_000, backlog: 6_000 - 256, droppedOverflow: 0 });
  expect([spills.large - spills.small, spills.leftSmall, spills.leftLarge]).toEqual([0, 0, 0]);

  // Delivery: batches of 100 leave, and the backlog is read into the window behind them.
  const live0 = await liveSlots(worker);
  await step(worker, 'perSample.record', R.counterA, 6_000, 0);
  const harness = (await liveSlots(worker)) - live0;
  const live1 = await liveSlots(worker);
  let last = await step(worker, 'perSample.deliver', 10_000);
  for (let i = 0; i < 60 && last.counts.queued > 0; i++) last = await step(worker, 'perSample.deliver', 10_000);
  const live2 = await liveSlots(worker);
  expect(last.counts).toMatchObject({ sent: 6_000, queued: 0, backlog: 0, droppedOverflow: 0 });
  // Nothing of the 5,744 samples read back stays: no more than what one evaluation leaves in the harness.
  expect(live2 - live1).toBeLessThanOrEqual(harness);
}, 120_000);

it('holds samples back by exception without allocating per sample', async () => {
  // Counting up by one: every fifth sample moved the deadband and is queued, the others are held back.
  const worker = await start({ backlog: false, reporting: [{ resource: R.counterA, deadband: 5, heartbeatMs: 600_000 }] });
  // 2,000 readings, 400 reports: the window is full, and every later report evicts the oldest.
  const held = await steps(worker, 2_000);
  expect(held.counts).toMatchObject({ accepted: 1_400, heldBack: 5_600, queued: 256 });
  expect([held.large - held.small, held.leftSmall, held.leftLarge]).toEqual([0, 0, 0]);
}, 120_000);
