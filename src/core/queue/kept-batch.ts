// The batch out in a request, kept in durable storage that can keep it (QueueStorage.sending): its
// samples' sequence numbers and the baselines its read-back needs, so that a restart reads it back before
// it sends it again (docs/architecture.md, "Reconciliation"). A storage's failure throws through: the
// stored queue, which makes its calls, counts and logs it as it does every storage failure.
import type { InFlight, QueueStorage } from '../host/host';
import type { SampleQueue } from './queue';

/** The reconciler (delivery/reconcile.ts, above this folder), as the stored queue reads it. */
export interface BaselineSource {
  /** How many resources a read-back can decide: the size an `InFlight` record needs. */
  readonly size: number;
  /** Writes into `out` the baselines a read-back of the first `n` queued samples needs. */
  baselines(n: number, queue: SampleQueue, out: InFlight): void;
}

export class KeptBatch {
  /** What `sending` hands to storage, allocated at the first batch. */
  private batch: InFlight | null = null;

  constructor(private readonly storage: QueueStorage, private readonly reconciler: BaselineSource) {}

  /**
   * A request carrying the first `n` samples of `q` is about to go out: storage that can keep it records
   * the batch and the baselines its read-back would need (one write per batch).
   */
  sending(n: number, q: SampleQueue): void {
    const storage = this.storage;
    if (storage.sending === undefined) return;
    const reconciler = this.reconciler;
    const batch = this.batch ?? (this.batch = { firstSeq: 0, lastSeq: 0, count: 0, size: 0, resources: new Uint32Array(reconciler.size), lastIds: new Float64Array(reconciler.size) });
    batch.firstSeq = q.seqAt(0);
    batch.lastSeq = q.seqAt(n - 1);
    batch.count = n;
    reconciler.baselines(n, q, batch);
    storage.sending(batch);
  }

  /** The batch storage kept as out in a request, if the restored queue `q` begins with exactly its samples. */
  restored(q: SampleQueue): InFlight | null {
    const b = this.storage.inFlight?.() ?? null;
    // Sequence numbers only increase, so equal ends and count mean the same samples; an acknowledged batch came back not at all.
    if (b === null || b.count < 1 || b.count > q.length || q.seqAt(0) !== b.firstSeq || q.seqAt(b.count - 1) !== b.lastSeq) return null;
    return b;
  }
}
