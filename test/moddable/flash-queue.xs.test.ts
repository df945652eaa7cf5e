// The flash queue on XS allocates nothing per sample, as the core's queue: appending a number writes it
// from a buffer allocated once, and reading one back makes no object. Each step is one evaluation without
// a collection in it, so the heap count it adds is every slot it allocated: a burst of 1,000 samples and
// one of 4,000 must add the same; a read of 50 samples and one of 200 the same. A read allocates per call
// and per 2 KB it takes from the file (a buffer and its view: 10 slots), about 200 numbers.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { XsWorker } from '../xs/harness';

let worker: XsWorker;

beforeAll(async () => {
  worker = await XsWorker.load('flash-queue', new URL('./flash-queue-entry.ts', import.meta.url));
  await worker.call('flash.open');
}, 60_000);

afterAll(() => worker?.close());

/** Slots one evaluation allocated (no collection in it), and what it answered. */
async function step(fn: string, ...args: unknown[]): Promise<{ slots: number; reply: number }> {
  const before = (await worker.evaluate('0')).meter.currentHeapCount;
  const { reply, meter } = await worker.invoke(fn, ...args);
  return { slots: meter.currentHeapCount - before, reply: (JSON.parse(reply) as { ok: number }).ok };
}

it('appends numbers and reads them back without allocating per sample', async () => {
  // The first burst makes the segment and its file; the ones measured only append.
  await step('flash.append', 10);
  const small = await step('flash.append', 1_000);
  const large = await step('flash.append', 4_000);
  expect(large.reply).toBeGreaterThan(small.reply);
  expect(large.slots - small.slots).toBe(0);

  await step('flash.read', 10);
  const few = await step('flash.read', 50);
  const more = await step('flash.read', 200);
  expect([few.reply, more.reply]).toEqual([50, 200]);
  expect(more.slots - few.slots).toBe(0);
}, 60_000);
