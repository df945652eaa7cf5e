// The Node host's clock and timers: monotonic time, timers that fire and cancel, and with holdProcess false
// never hold the process (that they hold it by default, and stop() releases it: test/e2e/package.test.ts).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';

import { createNodeHost } from '../../platforms/node/host/host';
import { workDir } from '../support/build';
import { bundle } from './support/bundle';

// Under the project, so that the bundle finds undici (which http.ts loads at run time) in node_modules.
const scratch = workDir('host-');
afterAll(scratch.remove);
afterEach(() => {
  vi.useRealTimers();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('createNodeHost', () => {
  it('keeps time that moves forward and ignores the wall clock', async () => {
    const host = createNodeHost();
    const start = host.now();
    await sleep(20);
    const later = host.now();
    expect(later).toBeGreaterThan(start);
    // The wall clock jumps back 26 years (an NTP correction, a device booting at 1970): now() does not.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2000-01-01T00:00:00Z'));
    expect(host.now()).toBeGreaterThanOrEqual(later);
  });

  it('fires a timer, and not one that was cleared', async () => {
    const host = createNodeHost();
    const fired: string[] = [];
    const cleared = host.setTimer(5, () => fired.push('cleared'));
    host.clearTimer(cleared);
    await new Promise<void>((resolve) => host.setTimer(20, () => (fired.push('kept'), resolve())));
    expect(fired).toEqual(['kept']);
  });

  it('waits out a delay longer than setTimeout can take in one go', () => {
    vi.useFakeTimers();
    const host = createNodeHost();
    const long = 2 ** 31 + 60_000;
    let fired = 0;
    host.setTimer(long, () => fired++);
    vi.advanceTimersByTime(2 ** 31 - 1);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(60_000);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(1);
    expect(fired).toBe(1);
  });

  it('cancels a long delay after its first leg', () => {
    vi.useFakeTimers();
    const host = createNodeHost();
    let fired = 0;
    const handle = host.setTimer(2 ** 32, () => fired++);
    vi.advanceTimersByTime(2 ** 31);
    host.clearTimer(handle);
    vi.advanceTimersByTime(2 ** 32);
    expect(fired).toBe(0);
  });

  it('with holdProcess false, lets a process whose only work is a pending timer exit', async () => {
    const script = await bundle('./pending-timer.ts', scratch.dir);
    // A held process would outlive the 10 s kill and fail here with a signal instead of code 0.
    const { stdout } = await promisify(execFile)(process.execPath, [script], { timeout: 10_000 });
    expect(stdout).toBe('armed\n');
  });

  it('refuses the option\'s old name, keepAlive, naming the new one', () => {
    expect(() => createNodeHost({ keepAlive: false } as never)).toThrow('createNodeHost: the option keepAlive was renamed holdProcess');
  });
});
