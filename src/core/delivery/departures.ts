// What leaves the head of the queue, and how it is counted, as the uplink carries out the steps
// (uplink.ts): a batch the service stored, one a read-back found stored, and, without a request, the
// refused sample isolation pinned down and the samples of gone resources. And which samples at the head
// wait for the lookup of a resource said to be gone (vanished.ts).
import type { Counters } from '../host/counters';
import type { BatchAnswer } from '../wire/answers';
import type { SampleQueue } from '../queue/queue';
import type { StoredQueue } from '../queue/stored-queue';
import type { Presence } from '../resources/presence';
import type { Head } from './head';
import type { Reconciler } from './reconcile';
import type { SetAsides } from './set-aside';
import type { Vanished } from './vanished';

export interface DeparturesParts {
  queue: SampleQueue;
  head: Head;
  stored: Pick<StoredQueue, 'checkpoint'>;
  reconciler: Pick<Reconciler, 'created'>;
  vanished: Vanished;
  setAsides: SetAsides;
  /** Told when a non-silent authenticated request reached the service. */
  presence: Pick<Presence, 'seen'>;
  counters: Counters;
}

export class Departures {
  private readonly queue: SampleQueue;
  private readonly head: Head;
  private readonly stored: Pick<StoredQueue, 'checkpoint'>;
  private readonly reconciler: Pick<Reconciler, 'created'>;
  private readonly vanished: Vanished;
  private readonly setAsides: SetAsides;
  private readonly presence: Pick<Presence, 'seen'>;
  private readonly counters: Counters;

  constructor(parts: DeparturesParts) {
    this.queue = parts.queue;
    this.head = parts.head;
    this.stored = parts.stored;
    this.reconciler = parts.reconciler;
    this.vanished = parts.vanished;
    this.setAsides = parts.setAsides;
    this.presence = parts.presence;
    this.counters = parts.counters;
  }

  /** The service stored the first `n` samples (its refused elements were set aside already). */
  delivered(n: number, answer: BatchAnswer): void {
    this.counters.sent += n - answer.rejected.length;
    this.counters.batches++;
    this.reconciler.created(answer.feeds, answer.partial);
    this.presence.seen();
    this.left(n);
  }

  /** The read-back showed the first `n` samples stored. */
  reconciled(n: number): void {
    this.counters.reconciled += n;
    this.counters.sent += n;
    this.left(n);
  }

  /** How many samples the next request carries: the head's count, short of a suspect or gone resource's sample. */
  nextCount(): number {
    const n = this.head.nextCount();
    if (this.vanished.count === 0 || this.head.state === 'isolating') return n;
    for (let i = 0; i < n; i++) if (this.vanished.isHeld(this.queue.resourceAt(i))) return i;
    return n;
  }

  /** The sample at the head waits while its resource is looked up after a 404: nothing is due until then. */
  held(): boolean {
    return this.vanished.count > 0 && this.head.count === 0 && this.queue.length > 0 && this.vanished.isHeld(this.queue.resourceAt(0)) &&
      !this.vanished.isGone(this.queue.resourceAt(0));
  }

  /** Sets aside, without a request, the refused sample isolation pinned down and the samples of gone resources at the head. */
  setAsideUnsent(now: number): void {
    for (;;) {
      if (this.head.pinned) {
        this.setAsideAt(0, this.head.reason, false);
      } else if (this.vanished.count > 0 && this.head.count === 0 && this.queue.length > 0 && this.vanished.isGone(this.queue.resourceAt(0))) {
        this.setAsideAt(0, 'resource ' + this.queue.resourceAt(0) + ' is gone', true);
      } else {
        return;
      }
      this.head.dropFirst(now);
      this.left(1);
    }
  }

  /** The `i`-th sample goes to the set-asides (`quiet`: not logged one by one). */
  setAsideAt(i: number, reason: string, quiet: boolean): void {
    this.setAsides.add(this.queue.resourceAt(i), this.queue.valueAt(i), reason, quiet);
  }

  /** Samples left the head: storage hears of it (and reads the backlog into their room). */
  private left(n: number): void {
    if (n > 0) this.stored.checkpoint();
  }
}
