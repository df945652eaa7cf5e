// A retry ladder draws each wait from the one backoff and raises its count; only a success starts it
// again. Its report says a failing endpoint when its state changes: the first failure, a count every
// STILL_FAILING_EVERY_MS, the recovery; never once per try.
import { describe, expect, it } from 'vitest';
import { FailureReport, RetryLadder, STILL_FAILING_EVERY_MS } from '../../src/core/requests/retry-ladder';
import { resumeBound, waitsWithin } from '../../src/core/requests/backoff';

const LADDER = { baseMs: 1_000, capMs: 120_000 };

describe('a retry ladder', () => {
  it('waits at least half of each ceiling and less than it, and starts again after a success', () => {
    for (const draw of [0, 0.5, 0.999]) {
      const ladder = new RetryLadder(LADDER, null, () => draw);
      const waits = Array.from({ length: 9 }, () => ladder.fail(0, 'down'));
      waits.forEach((w, k) => {
        const ceiling = Math.min(120_000, 1_000 * 2 ** k);
        expect(w).toBeGreaterThanOrEqual(ceiling / 2);
        expect(w).toBeLessThan(ceiling);
      });
      ladder.succeed(0);
      expect(ladder.failing).toBe(false);
      expect(ladder.fail(0, 'down')).toBeLessThan(1_000);
    }
  });

  it('fits waitsWithin(T) waits at their floors in T, and one more does not', () => {
    expect(waitsWithin(LADDER, 20_000)).toBe(5);
    expect(waitsWithin(LADDER, 499)).toBe(0);
    const ladder = new RetryLadder(LADDER, null, () => 0);
    let spent = 0;
    for (let k = 0; k < waitsWithin(LADDER, 60_000); k++) spent += ladder.fail(0, 'down');
    expect(spent).toBeLessThanOrEqual(60_000);
    expect(spent + ladder.fail(0, 'down')).toBeGreaterThan(60_000);
    expect(resumeBound(LADDER, 10_000)).toBe(21_000);
    expect(resumeBound(LADDER, 300_000)).toBe(120_000);
  });
});

describe('a failure report', () => {
  it('says the first failure, then a count every STILL_FAILING_EVERY_MS, then the recovery, and nothing per try', () => {
    const lines: string[] = [];
    const report = new FailureReport('command poll', (level, message) => void lines.push(level + ': ' + message));
    let t = 0;
    for (; t < 2 * STILL_FAILING_EVERY_MS + 1_000; t += 1_000) report.failed(t, 'connect ECONNREFUSED');
    report.recovered(t);
    expect(lines).toEqual([
      'warn: command poll: failing: connect ECONNREFUSED',
      'warn: command poll: still failing, 301 tries in 300 s: connect ECONNREFUSED',
      'warn: command poll: still failing, 601 tries in 600 s: connect ECONNREFUSED',
      'info: command poll: recovered after 601 failed tries in 601 s',
    ]);
    lines.length = 0;
    report.recovered(t + 1);
    report.failed(t + 2, 'HTTP 503');
    expect(lines).toEqual(['warn: command poll: failing: HTTP 503']);
  });
});
