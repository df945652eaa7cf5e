// A storage that holds a backlog (QueueStorage with `read`), in memory: segments of a fixed number of
// samples, a bound in segments, acknowledged segments deleted whole, the oldest unit beyond the window given
// up on `discard`. What a disk or a flash file system would do, without one, so that the core's backlog
// scenarios run alike on Node and on XS. Plain ES2020: it is bundled into the XS worker too.
import type { QueueStorage, SampleValue, StoredVisit } from '../../src/core/host/host';

interface Record {
  seq: number;
  resource: number;
  value: SampleValue;
  at: number;
}

export interface MemoryBacklog extends QueueStorage {
  /** Sequence numbers of the samples it holds, unacknowledged, oldest first. */
  held(): number[];
  /** Samples it gave up on `discard`. */
  discarded: number;
  /** Simulates a restart: times come back as NaN (no wall clock), or as they were. */
  restart(keepTimes: boolean): void;
}

/** `perSegment` samples a segment; `segments` the bound (each counts `perSegment` × 10 bytes). */
export function memoryBacklog(perSegment: number, segments: number): MemoryBacklog {
  const held: Record[][] = [];
  let acked = 0;
  let next = 1;
  let timesKept = true;
  const bytesOf = (n: number) => n * 10;
  const all = () => held.reduce((n, s) => n + s.length, 0);
  const visitFrom = (from: number, max: number, visit: StoredVisit): number => {
    let visited = 0;
    for (const segment of held) {
      for (const r of segment) {
        if (r.seq < from || r.seq <= acked) continue;
        if (visited === max || visit(r.seq, r.resource, r.value, timesKept ? r.at : NaN) === false) return r.seq;
        visited++;
      }
    }
    return next;
  };
  const storage: MemoryBacklog = {
    maxBytes: bytesOf(perSegment * segments),
    discarded: 0,
    load(visit, max) {
      visitFrom(acked + 1, max ?? Infinity, visit);
      return next;
    },
    append(seq, resource, value, at) {
      const last = held[held.length - 1];
      const rolls = last === undefined || last.length === perSegment;
      if (rolls && held.length === segments) return false;
      if (rolls) held.push([]);
      held[held.length - 1].push({ seq, resource, value, at });
      next = seq + 1;
      return true;
    },
    ack(seq) {
      acked = Math.max(acked, seq);
      next = Math.max(next, seq + 1);
      // Whole segments go once all of them is acknowledged; the one being written stays.
      while (held.length > 1 && held[0][held[0].length - 1].seq <= acked) held.shift();
    },
    read: visitFrom,
    discard(after) {
      // The oldest whole segment beyond `after`, never the one being written.
      for (let i = 0; i < held.length - 1; i++) {
        if (held[i][0].seq > after) {
          const gone = held.splice(i, 1)[0].filter((r) => r.seq > acked).length;
          storage.discarded += gone;
          return gone;
        }
      }
      return 0;
    },
    usedBytes: () => bytesOf(all()),
    held: () => held.flatMap((s) => s.filter((r) => r.seq > acked).map((r) => r.seq)),
    restart(keepTimes) {
      timesKept = keepTimes;
    },
  };
  return storage;
}
