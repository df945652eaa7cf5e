// A device's life on a fast-forward clock (bench/fast-forward.ts): the demo device's five sensors, one
// reading a second each, against the local service, through the agent with given uplink settings or
// through a client that sends each reading with operation 3 as it is taken (the baseline). Each reading
// carries the time it was taken (tenths of ms since the run began, on the counter resource 105), so
// when the service's 200 answer arrives every stored sample's age is known.
import { createAgent } from '../src/core/agent';
import type { UplinkConfig } from '../src/core/config';
import type { Host } from '../src/core/host/host';
import { Sampler } from '../src/core/intake/sampler';
import { createNodeHost } from '../platforms/node/host/host';
import { demoClient, demoDevice } from './demo';
import { FastForward } from './fast-forward';

const SENSORS = 5;
const EVERY_MS = 1000;
const COUNTER = 105;

export interface DeviceRun {
  /** Readings taken. */
  samples: number;
  /** HTTP requests made after start, of every kind. */
  requests: number;
  /** Age in ms of each sample when the service's answer that stored it arrived, ascending. */
  ages: number[];
}

/** A run's clock, and a host whose 200 answers to feed creations record the age of what they stored. */
function clocked(): { ff: FastForward; host: Host; reading: () => number; ages: number[] } {
  const ff = new FastForward(createNodeHost());
  const start = ff.now();
  const ages: number[] = [];
  const base = ff.host;
  const host: Host = {
    ...base,
    request: async (req) => {
      const result = await base.request(req);
      if (result.kind === 'response' && result.status === 200 && req.body !== undefined) {
        const at = ff.now() - start;
        const body = JSON.parse(req.body) as { input: number } | { input: number }[];
        for (const element of Array.isArray(body) ? body : [body]) ages.push(at - element.input / 10);
      }
      return result;
    },
  };
  return { ff, host, reading: () => Math.round((ff.now() - start) * 10), ages };
}

/** The agent with `uplink` settings (the rest default) for `durationMs` of device time. */
export async function agentRun(url: string, uplink: Partial<UplinkConfig>, durationMs: number, seed: number): Promise<DeviceRun> {
  const { ff, host, reading, ages } = clocked();
  let samples = 0;
  const read = (): number => (samples++, reading());
  const agent = createAgent(host, {
    ...demoDevice(url),
    sensors: Array.from({ length: SENSORS }, () => ({ resource: COUNTER, every: EVERY_MS, read })),
    uplink,
    seed,
  });
  await agent.start();
  const before = agent.stats().requests;
  await ff.run(durationMs);
  const requests = agent.stats().requests - before;
  await agent.stop({ flush: false });
  return { samples, requests, ages: ages.sort((a, b) => a - b) };
}

/** The baseline: each reading sent with operation 3 as it is taken, one request at a time; the ages only. */
export async function perSampleRun(url: string, durationMs: number): Promise<Pick<DeviceRun, 'ages'>> {
  const { ff, host, reading, ages } = clocked();
  const client = demoClient(url, host.request);
  const waiting: number[] = [];
  let sending = false;
  const send = async (): Promise<void> => {
    sending = true;
    for (let value = waiting.shift(); value !== undefined; value = waiting.shift()) await client.createFeed(COUNTER, value);
    sending = false;
  };
  const sensors = Array.from({ length: SENSORS }, () => ({ resource: COUNTER, every: EVERY_MS, read: reading }));
  const sampler = new Sampler(host, sensors, {
    sample: (_, value) => {
      waiting.push(value as number);
      if (!sending) void send();
    },
    // The reading is the clock: it cannot fail.
    readFailed: () => {},
  });
  sampler.begin();
  await ff.run(durationMs);
  sampler.end();
  return { ages: ages.sort((a, b) => a - b) };
}
