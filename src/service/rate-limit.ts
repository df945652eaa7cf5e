// An optional per-device token bucket (docs/interface.md: 429 only when a rate limit is configured).

export interface RateLimit {
  /** Sustained requests per second allowed to one device. */
  requestsPerSecond: number;
  /** Requests one device may make at once after being idle; defaults to `requestsPerSecond`. */
  burst?: number;
}

export class RateLimiter {
  private readonly buckets = new Map<number, { tokens: number; at: number }>();
  private readonly burst: number;

  constructor(
    private readonly limit: RateLimit,
    private readonly now: () => number,
  ) {
    this.burst = limit.burst ?? limit.requestsPerSecond;
    if (!(limit.requestsPerSecond > 0) || !(this.burst >= 1)) throw new RangeError('rate limit: requestsPerSecond must be > 0 and burst ≥ 1');
  }

  /** Takes one request from the device's bucket: 0 when allowed, else the seconds to wait (for Retry-After). */
  take(device: number): number {
    const now = this.now();
    const bucket = this.buckets.get(device) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + (Math.max(0, now - bucket.at) / 1000) * this.limit.requestsPerSecond);
    bucket.at = now;
    this.buckets.set(device, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.limit.requestsPerSecond));
  }
}
