// Who waits on the uplink (uplink.ts): flush() callers, each until the queue has passed a position;
// stop()'s drain; and whoever waits for the request in flight to end.
import { Wakers } from '../host/wakers';

export class FlushWaiters {
  /** flush() calls: each resolves once the queue's position passed `target`, or false at a failure. */
  private flushes: { target: number; resolve: (done: boolean) => void }[] = [];
  /** stop()'s drain: woken once the queue is empty, or once draining gave up. */
  readonly drained = new Wakers();
  /** Woken when the request in flight has ended. */
  readonly idle = new Wakers();

  get count(): number {
    return this.flushes.length;
  }

  /** Resolves true once the queue's position passed `target`, false at the first failure (`settle`). */
  flush(target: number): Promise<boolean> {
    return new Promise((resolve) => this.flushes.push({ target, resolve }));
  }

  /**
   * After departures (`ok`), resolves true each flush whose position `departed` passed, or every one when
   * nothing waits in the queue or its backlog (`empty`: a backlog that gave samples up at its bound never
   * reaches the position it promised), unless a request is in flight (`busy`); after a failure (not `ok`),
   * resolves every one false.
   */
  settle(ok: boolean, busy: boolean, departed: number, empty: boolean): void {
    if (this.flushes.length === 0) return;
    const keep: typeof this.flushes = [];
    for (const w of this.flushes) {
      if (!ok) w.resolve(false);
      else if ((departed >= w.target || empty) && !busy) w.resolve(true);
      else keep.push(w);
    }
    this.flushes = keep;
  }
}
