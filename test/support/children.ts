// The child processes the tests, the soak and the benchmarks start (simulators, services), in one list
// whichever helper started them, so that one hook ends every one a test left running.
import type { ChildProcess } from 'node:child_process';

const running = new Set<ChildProcess>();

/** Keeps `child` in the list until it closes; returns it. */
export function track(child: ChildProcess): ChildProcess {
  running.add(child);
  child.on('close', () => running.delete(child));
  return child;
}

/** For afterEach/afterAll: no child outlives its test. */
export function killAll(): void {
  for (const child of running) child.kill('SIGKILL');
}
