// Counters that continue across restarts. With a durable queue, a counter sensor resumes one past the
// highest value the agent accepted in any earlier run, so a crash neither repeats nor skips a value and
// "every value arrived, no gaps" stays a check one can make at the service.
//
// Why it is sound: the ledger file is written (atomically, by rename) in the same synchronous step as the
// durable queue's append of the value, before anything can acknowledge it. So at any kill, the highest
// accepted value is either in the ledger or still unacknowledged in the queue, and the resume point is
// the larger of the two.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { QueueStorage, SampleValue } from '../core/host';

export class CounterLedger {
  private readonly highest = new Map<number, number>();

  /** Reads `file` (absent: a first run) and the samples `storage` still holds for the counter resources. */
  constructor(
    private readonly file: string,
    private readonly counters: ReadonlySet<number>,
    storage: QueueStorage,
  ) {
    let saved: Record<string, unknown> = {};
    try {
      saved = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error('cannot read the counter ledger ' + file + ': ' + (e as Error).message);
    }
    for (const [key, value] of Object.entries(saved)) if (typeof value === 'number') this.highest.set(Number(key), value);
    // Loading is a query: the agent loads the same samples again when it starts.
    storage.load((_seq, resource, value) => this.note(resource, value));
  }

  /** Where the counter of `resource` goes on: one past the highest accepted value, or `start` if that is further. */
  resume(resource: number, start: number): number {
    const highest = this.highest.get(resource);
    return highest === undefined ? start : Math.max(start, highest + 1);
  }

  /** The storage the agent writes through: every counter value it accepts is recorded. */
  wrap(storage: QueueStorage): QueueStorage {
    return {
      load: (visit) => storage.load(visit),
      append: (seq, resource, value) => {
        try {
          storage.append(seq, resource, value);
        } finally {
          // Also after a failed append: the agent still holds the sample in memory and may deliver it.
          if (this.note(resource, value)) this.save();
        }
      },
      ack: (seq) => storage.ack(seq),
      close: () => storage.close?.(),
    };
  }

  private note(resource: number, value: SampleValue): boolean {
    if (!this.counters.has(resource) || typeof value !== 'number') return false;
    const highest = this.highest.get(resource);
    if (highest !== undefined && highest >= value) return false;
    this.highest.set(resource, value);
    return true;
  }

  private save(): void {
    const tmp = this.file + '.tmp';
    writeFileSync(tmp, JSON.stringify(Object.fromEntries(this.highest)));
    renameSync(tmp, this.file);
  }
}
