// Operation 4's body, written straight from the queue's typed arrays (ring.ts, by the slot layout of
// tags.ts): the same text as JSON.stringify of `{id_resource, input}` objects, but built from one prepared
// text per resource and kind, so that the common sample, a number of a resource with a text entry, costs
// one lookup and one concatenation (XS interprets every bytecode: docs/xs.md). Numbers use String(n),
// which equals JSON's form for finite numbers. It sits beside the queue because it reads those arrays as
// they are: a call to the queue per sample would cost XS compute on every sample. The uplink, which sends
// the batch, asks for the body (delivery/uplink.ts); the head of the queue only holds the lock.
//
// With ages on (`uplink.sendAge`, our extension of operation 4: docs/interface.md) each element also
// carries `"age_ms"`, how long ago its sample was taken by the host's monotonic clock.
import type { Host } from '../host/host';
import { ENTRY, FALSE, KIND_SHIFT, NO_ENTRY, NUMBER, STRING_TAG, TRUE } from './tags';
import type { SampleQueue } from './queue';
import { LIMITS } from '../wire/wire';

export class BatchBody {
  /**
   * Indexed by the tag of a number or boolean with a text entry: its element's text up to the value
   * (number; a string uses the same text) or up to the closing `}` (boolean). Built as entries are
   * claimed, here rather than at push, which allocates nothing; '' until then.
   */
  private readonly texts: string[] = [];
  private entriesBuilt = 0;

  /** `clock`: elements carry their sample's age, by this clock; null: they do not. */
  constructor(private readonly queue: SampleQueue, private readonly clock: Pick<Host, 'now'> | null = null) {
    for (let i = 0; i < STRING_TAG; i++) this.texts.push('');
  }

  /** The body of samples [from, from + count), which must be in the queue and in order (after `lock`). */
  encode(from: number, count: number): string {
    if (count === 0) return '[]';
    const q = this.queue;
    if (this.entriesBuilt !== q.entriesClaimed) this.buildTexts();
    // The range is one run of the ring, or two when it wraps: no wrap test per sample.
    const special = q.lastSpecial >= q.first + from;
    const start = (q.first + from) % q.slots;
    const head = Math.min(count, q.slots - start);
    const body = this.run(start, head, special);
    return '[' + (head < count ? body + '},' + this.run(0, count - head, special) : body) + '}]';
  }

  /**
   * The elements of slots [from, from + count), joined by `},` and without the last one's closing `}`.
   * `special`: some of them are not numbers with a text entry.
   */
  private run(from: number, count: number, special: boolean): string {
    // Views from slot `from` on, so that the loop takes every sample for a number with a text entry in
    // as few bytecodes as XS allows; then, if there are others, their elements replace the wrong text.
    const q = this.queue;
    const tags = q.tags.subarray(from, from + count), values = q.values.subarray(from, from + count), texts = this.texts;
    // Sized at once: growing it a sample at a time costs more XS compute (docs/xs.md).
    const parts: string[] = new Array(count);
    // k declared before the loop: XS copies a loop's own `let` on every turn.
    let k = 0;
    for (; k < count; k++) parts[k] = texts[tags[k]] + values[k];
    if (special) for (k = 0; k < count; k++) if (tags[k] >= NO_ENTRY) parts[k] = this.element(from + k);
    if (this.clock !== null) this.age(parts, from, count);
    return parts.join('},');
  }

  /**
   * Appends each element's `age_ms`: whole milliseconds since its sample was taken. A sample without a
   * time on this run's clock (restored undated) or older than the extension allows goes without one, and
   * the service stamps it with its arrival.
   */
  private age(parts: string[], from: number, count: number): void {
    const ats = this.queue.ats.subarray(from, from + count);
    const now = (this.clock as Pick<Host, 'now'>).now();
    for (let k = 0; k < count; k++) {
      const age = Math.floor(now - ats[k]);
      if (age >= 0 && age <= LIMITS.maxAgeMs) parts[k] += ',"age_ms":' + age;
    }
  }

  /** The element of slot `j` but its closing `}`, for what the texts do not cover: strings, ids without entry. */
  private element(j: number): string {
    const q = this.queue;
    const tag = q.tags[j];
    const entry = tag & ENTRY;
    if (tag < STRING_TAG && entry !== NO_ENTRY) return this.texts[tag];
    const prefix = entry !== NO_ENTRY ? this.texts[entry] : prefixText(q.resources[j]);
    if (tag >= STRING_TAG) return prefix + JSON.stringify(q.stringAt(j));
    if (tag >> KIND_SHIFT === NUMBER) return prefix + q.values[j];
    return prefix + (tag >> KIND_SHIFT === TRUE ? 'true' : 'false');
  }

  private buildTexts(): void {
    const q = this.queue;
    for (let e = this.entriesBuilt; e < q.entriesClaimed; e++) {
      const prefix = prefixText(q.entryIds[e]);
      this.texts[(NUMBER << KIND_SHIFT) | e] = prefix;
      this.texts[(FALSE << KIND_SHIFT) | e] = prefix + 'false';
      this.texts[(TRUE << KIND_SHIFT) | e] = prefix + 'true';
    }
    this.entriesBuilt = q.entriesClaimed;
  }
}

function prefixText(resource: number): string {
  return '{"id_resource":' + resource + ',"input":';
}
