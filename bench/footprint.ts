// What the agent costs on the XS engine, read from the xsnap worker's meters: live slots after gc()
// (16 bytes each on the device) and XS's compute count, each beside the naive way of doing the same.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEVICE, GAUGES } from '../test/scenarios/seed';
import { withBackend } from '../test/support/scenario-backend';
import { XsWorker, bundleForXs, liveSlots } from '../test/xs/harness';
import type { BenchSection } from './section';

const QUEUE = 1024;
/** Samples through each compute path: one batch, the most one operation-4 body may hold. */
const COMPUTE_SAMPLES = 1000;
const CORE_ENTRY = resolve('src/core/index.ts');
const ENTRY = pathToFileURL(resolve('test/xs/footprint-entry.ts'));

/** Slots of an engine that has only evaluated `script` (minus those of an empty engine). */
async function scriptSlots(script: string): Promise<number> {
  const empty = await XsWorker.start('empty');
  const loaded = await XsWorker.start('code-only');
  try {
    await loaded.evaluate(script);
    return (await liveSlots(loaded)) - (await liveSlots(empty));
  } finally {
    await Promise.all([empty.close(), loaded.close()]);
  }
}

/** The core as one minified ES2020 script: what a minifier makes of it, member names kept. */
function minifiedCore(): Promise<string> {
  return bundleForXs(CORE_ENTRY, { minify: true, globalName: 'FeedAgentCore' });
}

export async function benchFootprint(): Promise<BenchSection> {
  const codeSlots = await scriptSlots(await bundleForXs(CORE_ENTRY, { globalName: 'FeedAgentCore' }));
  const minifiedBytes = Buffer.byteLength(await minifiedCore());
  const figures: Record<string, number> = { 'xs.codeSlots': codeSlots, 'core.minifiedBytes': minifiedBytes };

  await withBackend(async (backend) => {
    // The realm xsnap gives, not the device's: these figures stay comparable with earlier runs.
    const worker = await XsWorker.load('footprint', ENTRY, { device: false });
    backend.serve(worker);
    const device = { url: backend.url, publicKey: DEVICE.publicKey, token: DEVICE.token, ids: GAUGES };
    try {
      const loaded = await liveSlots(worker);
      await worker.call('footprint.startAgent', device);
      const started = await liveSlots(worker);
      const queued = await worker.call('footprint.fill', GAUGES, QUEUE);
      if (queued !== QUEUE) throw new Error('the agent queued ' + String(queued) + ' samples, not ' + QUEUE);
      const filled = await liveSlots(worker);
      await worker.invoke('footprint.naiveFill', GAUGES, QUEUE);
      const naiveFilled = await liveSlots(worker);
      // The started agent queued one reading per sensor; the fill added the rest.
      const startedQueue = GAUGES.length;
      figures['xs.agentSlots'] = started - loaded;
      figures['xs.slotsPerQueuedSample'] = round((filled - started) / (QUEUE - startedQueue));
      figures['xs.baselineSlotsPerQueuedSample'] = round((naiveFilled - filled) / QUEUE);

      await worker.call('footprint.prepareCompute', device, COMPUTE_SAMPLES);
      const agent = await worker.invoke('footprint.compute', GAUGES, COMPUTE_SAMPLES);
      const naive = await worker.invoke('footprint.naiveCompute', GAUGES, COMPUTE_SAMPLES);
      if ((await worker.call('footprint.sameBody')) !== true) throw new Error('the agent and the naive path encoded different bodies');
      figures['xs.computePerSample'] = round(agent.meter.compute / COMPUTE_SAMPLES);
      figures['xs.baselineComputePerSample'] = round(naive.meter.compute / COMPUTE_SAMPLES);
    } finally {
      await worker.close();
    }
  });

  return {
    title: 'Footprint on XS (xsnap worker, slots of 16 bytes on the device)',
    figures,
    rows: [
      { label: 'core code, loaded (xs.codeSlots; in flash on the device)', value: figures['xs.codeSlots'], unit: 'slots' },
      { label: 'started agent: 8 sensors, queue 1,024 (goal ≤ 1,500)', value: figures['xs.agentSlots'], unit: 'slots' },
      {
        label: 'live slots per queued numeric sample (goal ≤ 0.05)',
        value: figures['xs.slotsPerQueuedSample'],
        baseline: figures['xs.baselineSlotsPerQueuedSample'],
        unit: 'slots',
      },
      {
        label: 'XS compute per sample, record() to batch body (goal ≤ 1.15 × baseline, issue 22)',
        value: figures['xs.computePerSample'],
        baseline: figures['xs.baselineComputePerSample'],
        unit: 'compute',
      },
      { label: 'core bundle, minified (no goal, reported)', value: minifiedBytes, unit: 'bytes' },
    ],
  };
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
