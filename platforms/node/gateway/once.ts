// Logging a repeated problem once per key (a topic, a register): the first time with its reason, then
// only counted. Bounded, as topics can carry ids without end.
const LIMIT = 10_000;

export class Once {
  private readonly seen = new Set<string>();

  constructor(private readonly log: (line: string) => void) {}

  /** Logs `line` the first time `key` comes (while fewer than LIMIT keys were seen). */
  say(key: string, line: string): void {
    if (this.seen.has(key) || this.seen.size >= LIMIT) return;
    this.seen.add(key);
    this.log(line);
  }
}
