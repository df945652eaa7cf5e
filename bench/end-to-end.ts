// Node end to end: samples per second from sensors through the agent (the core on the Node host) into
// the local service over loopback HTTP, beside a client that sends each reading with operation 3, one
// request at a time as the agent's lane does (the platform's own ESP8266 SDK sends one request per
// reading). The service is `feed-agent serve` in a child process, so the two processes have a core each.
// Enough sensors read every millisecond to offer more than the path can carry: the figure is what the
// service acknowledged, and what the full queue dropped meanwhile is the offered surplus.
import { createAgent } from '../src/core/agent';
import { createNodeHost } from '../platforms/node/host/host';
import { demoClient, demoDevice, NUMERIC, VALUES } from './demo';
import { medianOf, sleep } from './measure';
import type { BenchSection } from './section';
import { serve } from './serve';

const SENSORS = 400;
const WARMUP_MS = 500;
const WINDOW_MS = 2000;
const RUNS = 3;

/** Samples the service acknowledged per second, in each of RUNS windows of one agent's life; their median. */
async function agentRate(url: string): Promise<number> {
  const agent = createAgent(createNodeHost(), {
    ...demoDevice(url),
    sensors: Array.from({ length: SENSORS }, (_, i) => {
      const resource = NUMERIC[i % NUMERIC.length];
      const value = VALUES[resource] as number;
      return { resource, every: 1, read: () => value };
    }),
    uplink: { batch: 1000, queue: 16_384, flushMs: 1, maxLatencyMs: 1, startJitterMs: 0 },
  });
  await agent.start();
  try {
    await sleep(WARMUP_MS);
    return await medianOf(RUNS, async () => {
      const before = agent.stats().sent;
      const start = performance.now();
      await sleep(WINDOW_MS);
      return (agent.stats().sent - before) / ((performance.now() - start) / 1000);
    });
  } finally {
    await agent.stop({ flush: false });
  }
}

/** The baseline: each reading sent with operation 3 as it is taken, one request at a time. */
async function perSampleRate(url: string): Promise<number> {
  const client = demoClient(url);
  let stored = 0;
  let running = true;
  const loop = (async () => {
    for (let i = 0; running; i++) {
      const resource = NUMERIC[i % NUMERIC.length];
      await client.createFeed(resource, VALUES[resource]);
      stored++;
    }
  })();
  try {
    await sleep(WARMUP_MS);
    return await medianOf(RUNS, async () => {
      const before = stored;
      const start = performance.now();
      await sleep(WINDOW_MS);
      return (stored - before) / ((performance.now() - start) / 1000);
    });
  } finally {
    running = false;
    await loop;
  }
}

export async function benchEndToEnd(): Promise<BenchSection> {
  const service = await serve();
  let agent: number, single: number;
  try {
    single = Math.round(await perSampleRate(service.url));
    agent = Math.round(await agentRate(service.url));
  } finally {
    await service.stop();
  }
  return {
    title: `Node end to end: ${SENSORS} sensors every ms, agent to the local service over loopback (baseline: operation 3 per reading, one request at a time)`,
    rows: [{ label: 'samples stored per second (goal ≥ 100,000 and ≥ 50× the baseline)', value: agent, baseline: single, unit: 'samples/s' }],
    figures: { 'node.samplesPerSecond': agent, 'node.baselineSamplesPerSecond': single },
  };
}
