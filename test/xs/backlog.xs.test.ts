// The backlog on XS: an agent whose window of 256 samples spills to a storage that holds a backlog, and
// reads it back as batches leave, allocates nothing per sample. Each step is one evaluation without a
// collection in it, so the heap count it adds is every slot it allocated: steps of 1,000 and of 4,000
// samples must add the same (what an evaluation and a second of virtual time cost), and after a
// collection the live slots must not move from one step to the next.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEVICE, R } from '../scenarios/seed';
import { withBackend } from '../support/scenario-backend';
import type { ScenarioBackend } from '../support/scenario-backend';

import { liveSlots, XsWorker } from './harness';

interface Counts {
  accepted: number;
  queued: number;
  backlog: number;
  sent: number;
  droppedOverflow: number;
}

let worker: XsWorker;
let done: () => void;
let backend: ScenarioBackend;

beforeAll(async () => {
  const ready = new Promise<void>((resolve) => {
    void withBackend(async (b) => {
      backend = b;
      resolve();
      await new Promise<void>((end) => (done = end));
    });
  });
  await ready;
  worker = await XsWorker.load('backlog', new URL('./backlog-entry.ts', import.meta.url));
  backend.serve(worker);
  await worker.call('backlog.start', { url: backend.url, publicKey: DEVICE.publicKey, token: DEVICE.token, resource: R.counterA });
}, 60_000);

afterAll(async () => {
  await worker?.close();
  done?.();
});

/** Slots one evaluation allocated (no collection in it), and its counts. */
async function step(fn: string, ...args: unknown[]): Promise<{ slots: number; counts: Counts }> {
  const before = (await worker.evaluate('0')).meter.currentHeapCount;
  const { reply, meter } = await worker.invoke(fn, ...args);
  const outcome = JSON.parse(reply) as { ok?: Counts; error?: string };
  if (outcome.error !== undefined) throw new Error(outcome.error);
  return { slots: meter.currentHeapCount - before, counts: outcome.ok as Counts };
}

it('spills to the backlog and reads it back without allocating per sample', async () => {
  // Fill the window and start the backlog, so that the steps measured are all spills.
  await step('backlog.record', R.counterA, 0, 1_000);
  await liveSlots(worker);
  const small = await step('backlog.record', R.counterA, 1_000, 1_000);
  const live1 = await liveSlots(worker);
  // What an evaluation leaves live in the harness (a slot or so), measured by a step that records nothing.
  await step('backlog.record', R.counterA, 2_000, 0);
  const live2 = await liveSlots(worker);
  const large = await step('backlog.record', R.counterA, 2_000, 4_000);
  const live3 = await liveSlots(worker);
  expect(large.counts).toMatchObject({ accepted: 6_000, queued: 6_000, backlog: 6_000 - 256, droppedOverflow: 0 });
  expect(large.slots - small.slots).toBe(0);
  expect(live3 - live2).toBe(live2 - live1);

  // Delivery: batches of 100 leave, and the backlog is read into the window behind them.
  const first = await step('backlog.deliver', 10_000);
  const live4 = await liveSlots(worker);
  expect(first.counts.sent).toBeGreaterThan(0);
  let last = first;
  let steps = 0;
  for (; steps < 60 && last.counts.queued > 0; steps++) last = await step('backlog.deliver', 10_000);
  const live5 = await liveSlots(worker);
  expect(last.counts).toMatchObject({ sent: 6_000, queued: 0, backlog: 0, droppedOverflow: 0 });
  // Only the harness's slot per evaluation: nothing of the samples read back stays.
  expect(live5 - live4).toBe(steps * (live2 - live1));
}, 120_000);
