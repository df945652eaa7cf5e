// One request at a time: the uplink, command polls, presence reads, lookups all share this lane. On a
// device each open request costs a socket and, with TLS, a handshake's worth of memory. The lane takes
// turns: after a job ran, every other wanted job runs before it runs again, so a saturated uplink cannot
// starve command polls, nor polls the uplink. A job is given the lane to ask for its turn, and the lane
// runs it: the one tie both ways among the agent's parts, a scheduler's.

/** A kind of work that needs the network; `wanted` is set by its owner, cleared when the lane runs it. */
export interface Job {
  wanted: boolean;
  /** Never rejects. */
  run(): Promise<void>;
}

export class Lane {
  /** The jobs, in the order of their turns. */
  private jobs: readonly Job[] = [];
  private busy = false;
  /** Where the search for the next wanted job starts: just after the job that ran last. */
  private next = 0;
  private readonly done = (): void => {
    this.busy = false;
    this.kick();
  };

  /** The jobs this lane serves, in the order of their turns; given once, before any asks for one. */
  serve(jobs: readonly Job[]): void {
    this.jobs = jobs;
  }

  get idle(): boolean {
    return !this.busy;
  }

  /** `job` wants a turn. */
  want(job: Job): void {
    job.wanted = true;
    this.kick();
  }

  private kick(): void {
    if (this.busy) return;
    const count = this.jobs.length;
    for (let k = 0; k < count; k++) {
      const i = (this.next + k) % count;
      const job = this.jobs[i];
      if (!job.wanted) continue;
      job.wanted = false;
      this.busy = true;
      this.next = (i + 1) % count;
      job.run().then(this.done, this.done);
      return;
    }
  }
}
