// The rounds of background syncs: every queue of an instant syncs once, never more at once than the thread
// pool runs, and a queue that joins while a round is under way syncs in it or the next one.
import { describe, expect, it } from 'vitest';

import { syncAtNextInstant } from '../../platforms/node/storage/sync-rounds';
import type { BackgroundSync } from '../../platforms/node/storage/sync-rounds';

/** A queue whose sync takes `ms` and that counts how many syncs run at once, across all of them. */
function slowQueues(count: number, ms: number) {
  const state = { running: 0, most: 0, synced: new Array<number>(count).fill(0) };
  const queues: BackgroundSync[] = state.synced.map((_, k) => ({
    syncInBackground(done) {
      state.running++;
      state.most = Math.max(state.most, state.running);
      setTimeout(() => {
        state.running--;
        state.synced[k]++;
        done();
      }, ms);
    },
  }));
  return { state, queues };
}

const until = async (done: () => boolean) => {
  // Bounded by the test's timeout.
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 5));
};

describe('sync rounds', () => {
  it('syncs every queue of an instant once, at most four at a time', async () => {
    const { state, queues } = slowQueues(40, 3);
    for (const queue of queues) syncAtNextInstant(queue, 25);
    await until(() => state.synced.every((n) => n > 0));
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(state.synced).toEqual(new Array(40).fill(1));
    // Node's thread pool has four threads (UV_THREADPOOL_SIZE is not set in the tests).
    expect(state.most).toBe(4);
  });

  it('takes a queue that joins during a round, and all of the next instant', async () => {
    const { state, queues } = slowQueues(12, 20);
    for (const queue of queues.slice(0, 8)) syncAtNextInstant(queue, 30);
    // The round takes 40 ms (8 syncs of 20 ms, 4 at a time): the others join while it runs.
    await until(() => state.running > 0);
    for (const queue of queues.slice(8)) syncAtNextInstant(queue, 30);
    await until(() => state.synced.every((n) => n > 0));
    expect(state.synced).toEqual(new Array(12).fill(1));
    expect(state.most).toBe(4);
  });
});

describe('sync rounds, queues that need no sync', () => {
  it('goes through a round of queues whose turn ends at once (closed, or already syncing) without deepening the stack', async () => {
    let synced = 0;
    const instant: BackgroundSync = {
      syncInBackground(done) {
        synced++;
        done();
      },
    };
    for (let i = 0; i < 100_000; i++) syncAtNextInstant({ syncInBackground: (done) => instant.syncInBackground(done) }, 20);
    await until(() => synced === 100_000);
    expect(synced).toBe(100_000);
  });
});
