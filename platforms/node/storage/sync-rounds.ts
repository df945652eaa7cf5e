// The background syncs of the `interval` fsync policy, for every durable queue of the process, in rounds:
// at instants that are multiples of the interval on the process's clock, each queue that wrote since its
// last sync syncs, a few at a time in Node's thread pool. The same instants for every queue let a gateway's
// thousands of files share the file system's journal commits. A few at a time, because the pool runs only
// that many at once anyway: ten thousand issued together waited in libuv's queue with their native request
// state, ahead of any other work of the pool, and grew the C allocator's heap by about 3 KB a queue
// (docs/durable-queue.md, "Many queues in one process"). One timer an interval, not one a queue.
import { performance } from 'node:perf_hooks';

/** A queue the round syncs: it starts its sync off the event loop and calls `done` once that is over. */
export interface BackgroundSync {
  syncInBackground(done: () => void): void;
}

/** Node's thread pool: 4 threads unless UV_THREADPOOL_SIZE says otherwise. More in flight would only wait there. */
const IN_FLIGHT = Math.max(1, Math.min(1024, Number(process.env.UV_THREADPOOL_SIZE) || 4));

class Round {
  /** Queues waiting for the next instant. */
  private due: BackgroundSync[] = [];
  /** The round under way: queues from `next` on have not started their sync yet. */
  private current: (BackgroundSync | undefined)[] = [];
  private next = 0;
  private syncing = 0;
  private pumping = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly finished = (): void => {
    this.syncing--;
    this.pump();
  };

  constructor(private readonly every: number) {}

  add(queue: BackgroundSync): void {
    this.due.push(queue);
    if (this.timer !== null) return;
    this.timer = setTimeout(() => this.start(), this.every - (performance.now() % this.every));
    // A queue never holds the process open: close() syncs what is left.
    this.timer.unref();
  }

  private start(): void {
    this.timer = null;
    // A round still under way takes the new queues at its end.
    for (const queue of this.due) this.current.push(queue);
    this.due.length = 0;
    this.pump();
  }

  private pump(): void {
    // A queue whose turn ends at once (closed, or still syncing) calls `finished` from inside this loop:
    // the loop goes on, rather than a call deeper for each of ten thousand queues.
    if (this.pumping) return;
    this.pumping = true;
    const current = this.current;
    while (this.syncing < IN_FLIGHT && this.next < current.length) {
      const queue = current[this.next] as BackgroundSync;
      // Released as soon as it starts: a closed queue is not held until the round ends.
      current[this.next++] = undefined;
      this.syncing++;
      queue.syncInBackground(this.finished);
    }
    if (this.syncing === 0 && this.next === current.length) {
      current.length = 0;
      this.next = 0;
    }
    this.pumping = false;
  }
}

const rounds = new Map<number, Round>();

/** Syncs `queue` at the next multiple of `every` ms on the process's clock, in that instant's round. */
export function syncAtNextInstant(queue: BackgroundSync, every: number): void {
  let round = rounds.get(every);
  if (round === undefined) rounds.set(every, (round = new Round(every)));
  round.add(queue);
}
