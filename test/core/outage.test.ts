// After an outage of N seconds the agent tries again within min(backoffCapMs, 2N + backoffBaseMs) of its
// end, at the default settings (docs/architecture.md, "What counts as an attempt"): every wait is at least
// half its ceiling, so the waits before the last add up to half of it, and a read-back raises the attempt
// count only when it fails. With full jitter, 20 s of 500s or 10 s of resets could once leave a device
// waiting up to the 120 s cap.
// The same runs on XS: the probe `outage`.
import { describe, expect, it } from 'vitest';
import { OUTAGE_FAULTS, longestWaitAfter, outageBound } from '../support/outage';

describe('the longest wait after an outage, at the default settings', () => {
  for (const n of [500, 10_000, 20_000, 60_000, 300_000]) {
    for (const [kind, fault] of Object.entries(OUTAGE_FAULTS)) {
      it('of ' + n / 1000 + ' s of ' + kind + ': at most ' + outageBound(n) / 1000 + ' s', async () => {
        const longest = await longestWaitAfter(n, fault, 8);
        expect(longest, 'a request after the outage').toBeGreaterThanOrEqual(0);
        expect(longest).toBeLessThanOrEqual(outageBound(n));
      });
    }
  }
});
