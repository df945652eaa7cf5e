// After an outage of N seconds the agent tries again within max(backoffBaseMs, min(backoffCapMs, N)) of
// its end, at the default settings (docs/architecture.md, "What counts as an attempt"): the backoff's
// ceiling never passes how long the failing has lasted, and a read-back raises the attempt count only
// when it fails. Before, 20 s of 500s or 10 s of resets could leave a device waiting up to the 120 s cap.
import { describe, expect, it } from 'vitest';
import { createAgent } from '../../src/core/agent';
import { UPLINK_DEFAULTS } from '../../src/core/config';
import { FakeService } from '../support/fake-service';
import type { Fault } from '../support/fake-service';
import { VirtualClock } from '../support/virtual-clock';

const START = 30_000;

/** The longest gap, over `seeds` runs, between the end of an outage of `n` ms and the next request of the uplink. */
async function longestWaitAfter(n: number, fault: Fault, seeds: number): Promise<number> {
  let longest = 0;
  for (let seed = 1; seed <= seeds; seed++) {
    const clock = new VirtualClock();
    const service = new FakeService(clock, [{ id: 1 }]);
    const down = (): boolean => clock.now() >= START && clock.now() < START + n;
    service.faultFor = () => (down() ? fault : null);
    // A reset breaks the read-back too; a 500 outage answers reads with 500s.
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
    const uplink = service.requests.filter((r) => r.method === 'POST' || r.url.includes('/feeds/last'));
    const after = uplink.find((r) => r.at >= START + n);
    expect(after, 'a request after the outage').toBeDefined();
    longest = Math.max(longest, after!.at - (START + n));
    await agent.stop({ flush: false });
  }
  return longest;
}

describe('the longest wait after an outage, at the default settings', () => {
  const bound = (n: number): number => Math.max(UPLINK_DEFAULTS.backoffBaseMs, Math.min(UPLINK_DEFAULTS.backoffCapMs, n));
  for (const n of [500, 10_000, 20_000, 60_000, 300_000]) {
    it('of ' + n / 1000 + ' s of 500s: at most ' + bound(n) / 1000 + ' s', async () => {
      expect(await longestWaitAfter(n, { kind: 'status', status: 500 }, 8)).toBeLessThanOrEqual(bound(n));
    });
    it('of ' + n / 1000 + ' s of resets after the body went: at most ' + bound(n) / 1000 + ' s', async () => {
      expect(await longestWaitAfter(n, { kind: 'network', maybeDelivered: true, store: false }, 8)).toBeLessThanOrEqual(bound(n));
    });
  }
});
