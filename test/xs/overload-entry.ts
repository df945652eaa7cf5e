// Bundled into the XS worker for the overload run (soak/overload-xs.ts): an agent with a queue of 1,024 whose
// batches the service never answers (the slowest service there is) takes sample after sample, one
// evaluation per step, so that the Node side can read the live slots after gc() between steps.
import { createAgent } from '../../src/core';
import type { Agent, HttpRequest, HttpResult } from '../../src/core';
import { VirtualClock } from '../support/virtual-clock';
import { settled, xsLink } from './host';

const clock = new VirtualClock();
let agent: Agent | null = null;

/** Reads (the start-up lookup) reach the real service; a batch is sent and never answered. */
function request(req: HttpRequest): Promise<HttpResult> {
  if (req.method === 'POST') return new Promise<HttpResult>(() => undefined);
  return xsLink({ cmd: 'http', t: clock.now(), req }).then((outcome) => {
    if (outcome.kind === 'pending') throw new Error('the lookup was held');
    return outcome;
  });
}

const overload = {
  start(device: { url: string; publicKey: string; token: string; resource: number }) {
    const host = { request, now: clock.now, setTimer: clock.setTimer, clearTimer: clock.clearTimer };
    const uplink = { queue: 1024, batch: 100, startJitterMs: 0 };
    agent = createAgent(host, { url: device.url, publicKey: device.publicKey, token: device.token, resources: [device.resource], seed: 1, uplink });
    return settled(agent.start());
  },

  /** `count` readings, `from`, `from + 1`, …; answers the agent's counts after them. */
  record(resource: number, from: number, count: number) {
    const a = agent as Agent;
    for (let i = 0; i < count; i++) a.record(resource, from + i);
    const s = a.stats();
    return settled(Promise.resolve({ accepted: s.accepted, queued: s.queued, droppedOverflow: s.droppedOverflow }));
  },
};

(globalThis as { overload?: unknown }).overload = overload;
