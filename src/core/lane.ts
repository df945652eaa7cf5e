// One request at a time: the uplink, command polls, keep-alive reads and the start-up lookup all share
// this lane. On a device each open request costs a socket and, with TLS, a handshake's worth of memory.

/** A kind of work that needs the network; `wanted` is set by its owner, cleared when the lane runs it. */
export interface Job {
  wanted: boolean;
  /** Never rejects. */
  run(): Promise<void>;
}

export class Lane {
  private busy = false;
  private readonly done = (): void => {
    this.busy = false;
    this.kick();
  };

  /** @param jobs in priority order: the first wanted one runs next. */
  constructor(private readonly jobs: Job[]) {}

  get idle(): boolean {
    return !this.busy;
  }

  want(job: Job): void {
    job.wanted = true;
    this.kick();
  }

  private kick(): void {
    if (this.busy) return;
    for (const job of this.jobs) {
      if (!job.wanted) continue;
      job.wanted = false;
      this.busy = true;
      job.run().then(this.done, this.done);
      return;
    }
  }
}
