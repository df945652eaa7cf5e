// MQTT topic filters: matching a topic against `+` (one level) and `#` (the rest), and a router that finds
// the routes of a topic without trying every filter on every message.

/** Whether `topic` matches `filter` (MQTT 3.1.1 §4.7; a `$` topic is not matched by a leading wildcard). */
export function topicMatches(filter: string, topic: string): boolean {
  if (filter === topic) return true;
  if (topic.startsWith('$') && (filter.startsWith('+') || filter.startsWith('#'))) return false;
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}

const CACHE_LIMIT = 10_000;

/** Routes by filter; lookups of exact filters are one map read, wildcard results are cached per topic. */
export class TopicRouter<R> {
  private readonly exact = new Map<string, R[]>();
  private readonly wild: { filter: string; route: R }[] = [];
  private readonly cache = new Map<string, R[]>();

  constructor(entries: Iterable<[string, R]>) {
    for (const [filter, route] of entries) {
      if (/[+#]/.test(filter)) this.wild.push({ filter, route });
      else {
        const list = this.exact.get(filter);
        if (list === undefined) this.exact.set(filter, [route]);
        else list.push(route);
      }
    }
  }

  /** Every route whose filter matches `topic` (shared array: do not change it). */
  match(topic: string): readonly R[] {
    if (this.wild.length === 0) return this.exact.get(topic) ?? [];
    let found = this.cache.get(topic);
    if (found !== undefined) return found;
    found = [...(this.exact.get(topic) ?? []), ...this.wild.filter((w) => topicMatches(w.filter, topic)).map((w) => w.route)];
    // Topics with an id in them would grow the cache without end: start over past a bound.
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(topic, found);
    return found;
  }
}
