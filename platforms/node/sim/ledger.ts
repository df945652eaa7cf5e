// Counters that continue across restarts. With a durable queue, a counter sensor resumes one past the
// highest value the agent accepted in any earlier run, so a crash neither repeats nor skips a value and
// "every value arrived, no gaps" stays a check one can make at the service.
//
// Why it is sound: the resume point is the larger of the ledger file and the samples the queue still
// holds. An accepted value sits in the queue until an ack lets the queue forget it, and the ledger file
// is written (atomically, by rename) before every ack that follows a new highest value. So at any kill,
// the highest accepted value is either in the file or still unacknowledged in the queue. Writing the file
// per ack rather than per append keeps the extra file writes off the per-sample path.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { QueueStorage, SampleValue } from '../../../src/core/host/host';

export class CounterLedger {
  private readonly highest = new Map<number, number>();
  /** `highest` holds a value the file does not. */
  private unsaved = false;

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
    // Loading is a query: the agent loads the same samples again when it starts. A value found only
    // there is written to the file before the ack that lets the queue forget it.
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
      load: (visit, max) => storage.load(visit, max),
      append: (seq, resource, value, at) => {
        // Also when the append fails: the agent still holds the sample in memory and may deliver it.
        this.note(resource, value);
        return storage.append(seq, resource, value, at);
      },
      ack: (seq) => {
        this.save();
        storage.ack(seq);
      },
      // The batch out in a request, for a read-back after a restart, passes through as it is.
      sending: storage.sending?.bind(storage),
      inFlight: storage.inFlight?.bind(storage),
      // The backlog, as it is.
      read: storage.read?.bind(storage),
      discard: storage.discard?.bind(storage),
      usedBytes: storage.usedBytes?.bind(storage),
      maxBytes: storage.maxBytes,
      close: () => {
        try {
          this.save();
        } catch {
          // Not a loss: what the file lacks was never acknowledged, so the queue still holds it, or at worst it is sent again.
        } finally {
          storage.close?.();
        }
      },
    };
  }

  private note(resource: number, value: SampleValue): void {
    if (!this.counters.has(resource) || typeof value !== 'number') return;
    const highest = this.highest.get(resource);
    if (highest !== undefined && highest >= value) return;
    this.highest.set(resource, value);
    this.unsaved = true;
  }

  private save(): void {
    if (!this.unsaved) return;
    const tmp = this.file + '.tmp';
    writeFileSync(tmp, JSON.stringify(Object.fromEntries(this.highest)));
    renameSync(tmp, this.file);
    this.unsaved = false;
  }
}
