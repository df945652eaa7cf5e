// The head of the queue: the batch the uplink works on and what is known about it, in one explicit
// state (docs/architecture.md, "The head of the queue"). It holds the queue's lock over every sample it
// reasons about (a batch out, a batch whose outcome is unknown, the range a refused element hides in),
// so that an overflow eviction, which takes only unlocked samples, cannot move what an index points at.
//
//   idle       nothing known; the next batch goes from `at` on (backoff, or at once)
//   sending    the first `count` samples are out in one request
//   unknown    the first `count` samples went out and may be stored: they are read back from `at` on
//   isolating  the service refused one of the first `count` samples: the one at `bad`, or one the
//              halves find (bisection); prefixes go until it is pinned down and set aside
//   paused     the service refused the request as a whole (a refused token): nothing before `at`
import type { SampleQueue } from './queue';
import { BatchBody } from './batch-body';
import { IDLE, ISOLATING, PAUSED, SENDING, UNKNOWN } from './decide';

export class Head {
  state = IDLE;
  /** Samples at the head this state reasons about, all of them locked; 0 in idle and paused. */
  count = 0;
  /** Isolating: the index of the refused element when the service named it, else -1 (it is among `count`). */
  bad = -1;
  /** Isolating: why the service refused it. */
  reason = '';
  /** No request before this time. */
  at = 0;
  /** `at` holds for flush() and stop() too: Retry-After, a refused token. */
  firm = false;
  /** Paused because the token was refused. */
  authRefused = false;
  /** A request failed and nothing was acknowledged since: the next one goes as soon as `at` allows. */
  retrying = false;
  /** Unknown: a read-back made from this time on can rule out that the service still stores the batch. */
  settledAt = 0;

  private readonly body: BatchBody;

  constructor(private readonly queue: SampleQueue) {
    this.body = new BatchBody(queue);
  }

  /** Isolation has pinned the refused element down to the first sample: set it aside without sending it again. */
  get pinned(): boolean {
    return this.state === ISOLATING && (this.bad === 0 || (this.bad < 0 && this.count === 1));
  }

  /** How many samples the next batch carries, at most `limit`: the prefix before a refused element, or a half. */
  nextCount(limit: number): number {
    if (this.state === ISOLATING) return Math.min(this.bad > 0 ? this.bad : Math.floor(this.count / 2), limit);
    return Math.min(this.queue.length, limit);
  }

  /** The first `n` samples go out: their body, locked. */
  send(n: number): string {
    if (this.state !== ISOLATING) this.enter(SENDING, n);
    return this.body.take(n);
  }

  /** The first `n` samples are finished (stored, or read back stored): they leave, and so does what was known of them. */
  acknowledge(n: number): void {
    this.queue.shift(n);
    if (this.state === ISOLATING && this.count > n) {
      // A prefix before the refused element went through: it is in the rest.
      this.count -= n;
      if (this.bad > 0) this.bad -= n;
    } else {
      this.enter(IDLE, 0);
    }
    this.at = 0;
    this.retrying = false;
  }

  /** The first sample leaves without being stored (set aside). */
  dropFirst(): void {
    this.queue.shift(1);
    this.enter(IDLE, 0);
  }

  /** The service refused element `i` of the batch (named), or one of the first `n` (`i` -1). */
  isolate(i: number, n: number, reason: string): void {
    this.enter(ISOLATING, i >= 0 ? i + 1 : n);
    this.bad = i;
    this.reason = reason;
    this.at = 0;
  }

  /** The batch of `n` may be stored: read it back from `at`, deciding "not stored" only from `settledAt`. */
  unknown(n: number, at: number): void {
    this.enter(UNKNOWN, n);
    this.at = at;
    this.settledAt = at;
    this.retrying = true;
  }

  /** The read-back did not reach the service: it is tried again at `at`, the batch still unknown. */
  readAgainAt(at: number): void {
    this.at = at;
  }

  /** No request before `at`; an isolation goes on from there, anything else starts over. */
  wait(at: number, firm: boolean): void {
    if (this.state !== ISOLATING) this.enter(IDLE, 0);
    this.at = at;
    this.firm = firm;
    this.retrying = true;
  }

  pause(at: number, authRefused: boolean): void {
    this.enter(PAUSED, 0);
    this.at = at;
    this.firm = true;
    this.authRefused = authRefused;
    this.retrying = true;
  }

  /**
   * flush() or stop() asks: a backoff or a read-back's wait ends now (a read-back made early decides
   * "stored" or "undecided", never "not stored"); a firm wait stays, but for `evenFirm` (stop() while
   * paused tries once at once).
   */
  hurry(now: number, evenFirm: boolean): void {
    if ((evenFirm || !this.firm) && this.at > now) this.at = now;
  }

  private enter(state: number, count: number): void {
    if (state !== PAUSED) this.authRefused = false;
    this.state = state;
    this.count = count;
    this.bad = -1;
    this.firm = false;
    this.queue.lock(count);
  }
}
