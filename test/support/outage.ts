// The longest wait after an outage, on a virtual clock at the default settings: the run behind
// test/core/outage.test.ts on Node and the XS probe `outage`. Plain ES2020 with no host global.
import { createAgent } from '../../src/core/agent';
import { UPLINK_DEFAULTS } from '../../src/core/config';
import { resumeBound } from '../../src/core/requests/backoff';
import { FakeService } from './fake-service';
import type { Fault } from './fake-service';
import { VirtualClock } from './virtual-clock';

const START = 30_000;

/** The outages the test and the probe try: 500s and resets after the body went (read-backs reset too). */
export const OUTAGE_FAULTS: Record<string, Fault> = {
  '500s': { kind: 'status', status: 500 },
  'resets after the body went': { kind: 'network', maybeDelivered: true, store: false },
};

/** The bound docs/architecture.md states: min(backoffCapMs, 2n + backoffBaseMs). */
export function outageBound(n: number): number {
  return resumeBound({ baseMs: UPLINK_DEFAULTS.backoffBaseMs, capMs: UPLINK_DEFAULTS.backoffCapMs }, n);
}

/**
 * The longest gap, over `seeds` runs, between the end of an outage of `n` ms and the uplink's next
 * request (a batch or a read-back); -1 when a run made none after it.
 */
export async function longestWaitAfter(n: number, fault: Fault, seeds: number): Promise<number> {
  let longest = 0;
  for (let seed = 1; seed <= seeds; seed++) {
    const clock = new VirtualClock();
    const service = new FakeService(clock, [{ id: 1 }]);
    const down = (): boolean => clock.now() >= START && clock.now() < START + n;
    service.faultFor = () => (down() ? fault : null);
    service.readFaultFor = () => (down() ? fault : null);
    const agent = createAgent(service.host(), { url: 'http://127.0.0.1:9', publicKey: 'KEY', token: service.token, seed, resources: [1] });
    const started = agent.start();
    await clock.advance(0);
    await started;
    const end = START + n + UPLINK_DEFAULTS.backoffCapMs + 20_000;
    for (let t = 0; t < end; t += 1_000) {
      agent.record(1, t);
      await clock.advance(1_000);
    }
    const after = service.requests.find((r) => r.at >= START + n && (r.method === 'POST' || r.url.indexOf('/feeds/last') >= 0));
    const stopped = agent.stop({ flush: false });
    await clock.advance(0);
    await stopped;
    if (after === undefined) return -1;
    longest = Math.max(longest, after.at - (START + n));
  }
  return longest;
}
