// Promises that wait for one kind of event and all resolve when it comes: room in a full queue
// (queue/stored-queue.ts), the end of a request in flight and of a drain (delivery/uplink.ts).
export class Wakers {
  private waiting: (() => void)[] | null = null;

  /** Resolves at the next `wake`. */
  wait(): Promise<void> {
    return new Promise((resolve) => (this.waiting ??= []).push(resolve));
  }

  /** Resolves every promise `wait` gave so far. */
  wake(): void {
    const waiting = this.waiting;
    if (waiting === null) return;
    this.waiting = null;
    for (const resolve of waiting) resolve();
  }
}
