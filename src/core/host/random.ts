// A small seeded PRNG (mulberry32). The core uses it for backoff and start-up jitter so that tests can
// fix the seed; on a device the seed comes from Math.random, so a fleet does not move in step.

/** Returns a generator of numbers in [0, 1) determined by `seed`. */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
