// One request at a time: the uplink, command polls, keep-alive reads and the start-up lookup all share
// this lane. On a device each open request costs a socket and, with TLS, a handshake's worth of memory.

/** A kind of work that needs the network; `wanted_` is set by its owner, cleared when the lane runs it. */
export interface Job {
  wanted_: boolean;
  /** Never rejects. */
  run_(): Promise<void>;
}

export class Lane {
  private busy_ = false;
  private readonly done_ = (): void => {
    this.busy_ = false;
    this.kick_();
  };

  /** @param jobs in priority order: the first wanted one runs next. */
  constructor(private readonly jobs_: Job[]) {}

  get idle_(): boolean {
    return !this.busy_;
  }

  want_(job: Job): void {
    job.wanted_ = true;
    this.kick_();
  }

  private kick_(): void {
    if (this.busy_) return;
    for (const job of this.jobs_) {
      if (!job.wanted_) continue;
      job.wanted_ = false;
      this.busy_ = true;
      job.run_().then(this.done_, this.done_);
      return;
    }
  }
}
