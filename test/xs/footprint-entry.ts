// Bundled into the footprint bench's XS worker (bench/footprint.ts): the agent on a host whose requests
// reach the real service through issueCommand, and the naive baseline. Each step is one evaluation, so
// the bench can read the worker's meters (after gc) between steps.
import { checkInput, compileRestriction, createAgent } from '../../src/core';
import type { Agent, AgentConfig, FeedInput, Host, HttpRequest, HttpResult } from '../../src/core';
import { VirtualClock } from '../support/virtual-clock';
import { settled, xsLink } from './host';

/** The time never moves: sensors, flushes and presence reads stay quiet unless a step queues enough to flush. */
const clock = new VirtualClock();

interface Device {
  url: string;
  publicKey: string;
  token: string;
  ids: number[];
}

function hostFor(send: (req: HttpRequest) => Promise<HttpResult>): Host {
  return { request: send, now: clock.now, setTimer: clock.setTimer, clearTimer: clock.clearTimer };
}

/** Through issueCommand to the service; no request is ever held in the bench. */
const online = (req: HttpRequest): Promise<HttpResult> =>
  xsLink({ cmd: 'http', t: clock.now(), req }).then((outcome) => {
    if (outcome.kind === 'pending') throw new Error('a bench request was held');
    return outcome;
  });

/** The naive path checks samples with the same rule as the agent (the counters' subtype). */
const restriction = compileRestriction({ data_restriction_regex: null, data_restriction_begin_range: 0, data_restriction_end_range: 1e9 });

/** A reading such as a sensor gives: a few significant digits. */
const reading = (i: number): number => 20 + (i % 40) / 4;

// What the bench keeps alive between evaluations (unreachable objects would be collected by gc()).
let measured: Agent | null = null;
let offline = false;
let naiveQueue: FeedInput[] = [];
let computeAgent: Agent | null = null;
let agentBody: string | null = null;
let naiveBody: string | null = null;

function config(device: Device, extra: Partial<AgentConfig>): AgentConfig {
  return { url: device.url, publicKey: device.publicKey, token: device.token, seed: 1, ...extra };
}

const footprint = {
  /** A started agent with a sensor on each id and the default uplink (queue 1,024). */
  startAgent(device: Device) {
    const sensors = device.ids.map((resource, i) => ({ resource, every: 1_000, read: () => reading(i) }));
    const host = hostFor((req) => (offline ? Promise.resolve({ kind: 'network', message: 'offline', maybeDelivered: false }) : online(req)));
    measured = createAgent(host, config(device, { sensors, uplink: { startJitterMs: 0 } }));
    return settled(measured.start());
  },

  /** The device loses its network; the queue fills to `count` numeric samples (its flushes fail). */
  fill(ids: number[], count: number) {
    offline = true;
    const agent = measured as Agent;
    for (let i = agent.stats().queued; i < count; i++) agent.record(ids[i % ids.length], reading(i));
    return settled(Promise.resolve(agent.stats().queued));
  },

  /** The naive queue: one `{id_resource, input}` object per sample in a growing array. */
  naiveFill(ids: number[], count: number): void {
    naiveQueue = [];
    for (let i = 0; i < count; i++) naiveQueue.push({ id_resource: ids[i % ids.length], input: reading(i) });
  },

  /** An agent whose one batch of `count` samples is encoded, handed to the host, and never answered. */
  prepareCompute(device: Device, count: number) {
    const host = hostFor((req) => {
      if (req.method === 'GET') return online(req);
      agentBody = req.body ?? null;
      return new Promise<HttpResult>(() => undefined);
    });
    computeAgent = createAgent(host, config(device, { resources: device.ids, uplink: { startJitterMs: 0, batch: count, queue: count } }));
    return settled(computeAgent.start());
  },

  /** Sampling to batch body through the agent: `count` record() calls, the last of which fills the batch. */
  compute(ids: number[], count: number): void {
    const agent = computeAgent as Agent;
    for (let i = 0; i < count; i++) agent.record(ids[i % ids.length], reading(i));
  },

  /** The same through the naive path: the same validation, an object per sample, JSON.stringify. */
  naiveCompute(ids: number[], count: number): void {
    const queue: FeedInput[] = [];
    for (let i = 0; i < count; i++) {
      const input = reading(i);
      if (checkInput(input, restriction) === null) queue.push({ id_resource: ids[i % ids.length], input });
    }
    naiveBody = JSON.stringify(queue);
  },

  /** Both paths must have produced the same request body, or the comparison means nothing. */
  sameBody() {
    return settled(Promise.resolve(agentBody !== null && agentBody === naiveBody));
  },
};

(globalThis as { footprint?: unknown }).footprint = footprint;
