// One request at a time: the uplink, command polls, presence reads, lookups all share this lane. On a
// device each open request costs a socket and, with TLS, a handshake's worth of memory. The lane takes
// turns: after a job ran, every other wanted job runs before it runs again, so a saturated uplink cannot
// starve command polls, nor polls the uplink. A job is given the lane to ask for its turn, and the lane
// runs it: the one tie both ways among the agent's parts, a scheduler's. A host that paces many agents
// grants the turns (Host['turn']): the lane waits for one, then runs the job wanted at that moment.
import type { Host } from '../host/host';

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
  /** Runs the next wanted job: once the host granted a turn, what is wanted then (a flush, a poll) goes. */
  private readonly go = (): void => {
    const count = this.jobs.length;
    for (let k = 0; k < count; k++) {
      const i = (this.next + k) % count;
      const job = this.jobs[i];
      if (!job.wanted) continue;
      job.wanted = false;
      this.next = (i + 1) % count;
      job.run().then(this.done, this.done);
      return;
    }
    this.busy = false;
  };

  /** A host with `turn` grants each job its turn; without it, jobs run at once. */
  constructor(private readonly host: Pick<Host, 'turn'> = {}) {}

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
    if (this.busy || !this.anyWanted()) return;
    this.busy = true;
    if (this.host.turn === undefined) this.go();
    else this.host.turn().then(this.go, this.go);
  }

  private anyWanted(): boolean {
    for (let i = 0; i < this.jobs.length; i++) if (this.jobs[i].wanted) return true;
    return false;
  }
}
