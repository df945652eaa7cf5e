// Report by exception on the demo greenhouse: an hour of the simulator's demo device (its plan, its
// signals, its uplink settings) on a fast-forward clock against the local service, through the counting
// proxy, with the demo's report rules (the door contact on change, the water meter's total on a change of
// 10 at most once a minute, both with a 5 min heartbeat) and without them (every sample sent: the baseline).
// Requests, bytes on the socket both ways, and feeds stored, per hour of the device's time.
import { createAgent } from '../src/core/agent';
import { FeedClient } from '../src/core/wire/client';
import { createNodeHost } from '../platforms/node/host/host';
import { DEMO_ACTUATORS, DEMO_RESOURCES } from '../src/service';
import { planFor } from '../platforms/node/sim/plan';
import { createSignal } from '../platforms/node/sim/signals';
import { SIM_UPLINK } from '../platforms/node/sim/simulator';
import { CountingProxy } from './counting-proxy';
import { demoDevice } from './demo';
import { FastForward } from './fast-forward';
import { format } from './measure';
import type { BenchSection } from './section';
import { serve } from './serve';

const HOUR_MS = 3_600_000;

interface Hour {
  requests: number;
  bytes: number;
  feeds: number;
  /** Feeds of the resources that have a rule, and their samples. */
  ruledFeeds: number;
  ruledSamples: number;
}

/** An hour of the demo device through `proxy`, with its report rules or without. */
async function hour(proxy: CountingProxy, rules: boolean): Promise<Hour> {
  const ff = new FastForward(createNodeHost());
  const client = new FeedClient(ff.host.request, { ...demoDevice(proxy.url), baseUrl: proxy.url, timeoutMs: 10_000 });
  const resources = await client.getResources(DEMO_RESOURCES);
  const plan = planFor(resources, DEMO_ACTUATORS, rules);
  const ruled = new Set(planFor(resources, DEMO_ACTUATORS, true).sensors.filter((s) => s.report !== undefined).map((s) => s.resource));
  let ruledSamples = 0;
  let ruledFeeds = 0;
  const host = {
    ...ff.host,
    // The feeds of the ruled resources that a 200 answer stored.
    request: async (req: Parameters<typeof ff.host.request>[0]) => {
      const result = await ff.host.request(req);
      if (result.kind === 'response' && result.status === 200 && req.method === 'POST' && req.body !== undefined) {
        for (const element of JSON.parse(req.body) as { id_resource: number }[]) if (ruled.has(element.id_resource)) ruledFeeds++;
      }
      return result;
    },
  };
  const agent = createAgent(host, {
    ...demoDevice(proxy.url),
    sensors: plan.sensors.map((s) => {
      const signal = createSignal(s.spec, { now: ff.now, random: Math.random });
      return { resource: s.resource, every: s.every, read: () => (ruled.has(s.resource) && ruledSamples++, signal()) };
    }),
    actuators: plan.actuators.map((a) => ({ resource: a.resource, every: a.every, handle: () => {} })),
    reporting: plan.sensors.flatMap((s) => (s.report === undefined ? [] : [{ resource: s.resource, ...s.report }])),
    uplink: SIM_UPLINK,
    seed: 1,
  });
  await agent.start();
  proxy.reset();
  const before = agent.stats();
  await ff.run(HOUR_MS);
  const after = agent.stats();
  await agent.stop({ flush: false });
  return {
    requests: after.requests - before.requests,
    bytes: proxy.bytes,
    feeds: after.sent - before.sent,
    ruledFeeds,
    ruledSamples,
  };
}

export async function benchException(): Promise<BenchSection> {
  const service = await serve();
  const proxy = await CountingProxy.start(Number(new URL(service.url).port));
  try {
    const on = await hour(proxy, true);
    const off = await hour(proxy, false);
    return {
      title: 'Report by exception: an hour of the demo greenhouse (simulator settings) with its report rules (baseline: every sample sent)',
      rows: [
        { label: 'requests per hour', value: on.requests, baseline: off.requests, unit: 'requests' },
        { label: 'bytes on the socket per hour, both ways', value: on.bytes, baseline: off.bytes, unit: 'bytes' },
        { label: 'feeds stored per hour', value: on.feeds, baseline: off.feeds, unit: 'feeds' },
        { label: `feeds of the contact and the meter's total (${format(on.ruledSamples)} samples)`, value: on.ruledFeeds, baseline: off.ruledSamples, unit: 'feeds' },
      ],
      figures: {
        'exception.requestsPerHour': on.requests,
        'exception.baselineRequestsPerHour': off.requests,
        'exception.bytesPerHour': on.bytes,
        'exception.baselineBytesPerHour': off.bytes,
        'exception.feedsPerHour': on.feeds,
        'exception.baselineFeedsPerHour': off.feeds,
        'exception.ruledFeedsPerHour': on.ruledFeeds,
        'exception.baselineRuledFeedsPerHour': off.ruledSamples,
      },
    };
  } finally {
    await proxy.close();
    await service.stop();
  }
}
