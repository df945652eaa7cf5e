// The host contract: everything the core needs from the platform it runs on, and nothing else.
// An adapter (platforms/node, platforms/moddable, the XS test harness) implements it; the core
// touches no global of its host (no timers, fetch, console, Buffer, process, TextEncoder).

/** One HTTP exchange the core asks for. The adapter enforces `timeoutMs` itself. */
export interface HttpRequest {
  method: 'GET' | 'POST';
  /** Absolute URL: base URL + path + query, already escaped by the core. */
  url: string;
  /** Header names as sent. Contains the bearer token: an adapter must never log it. */
  headers: Record<string, string>;
  /** JSON text, for POST. The adapter sends it as UTF-8 and counts Content-Length in bytes. */
  body?: string;
  timeoutMs: number;
  /**
   * The most answer bytes the core will look at: the largest answer this request can honestly
   * produce, with room to spare. An adapter never reads more and never allocates from a length the
   * peer sends; what is beyond is dropped with the connection. A 2xx answer longer than this is a
   * garbled answer, reported as `{ kind: 'network', maybeDelivered: true }` (the request was written).
   * Any other status is that status whatever the length of its body (the status line came first: a
   * proxy's 5 MB error page is a 503): a `response` whose body is the first bytes, up to this many.
   */
  maxResponseBytes: number;
}

/**
 * The outcome of one exchange. An adapter never rejects: every failure is one of these kinds.
 * `maybeDelivered` tells the core whether the server may have acted on the request although no answer
 * came back (the request was written, then the connection broke or the timer fired). A connection that
 * was refused, or a name that did not resolve, is `maybeDelivered: false`: nothing can have arrived.
 */
export type HttpResult =
  | {
      kind: 'response';
      status: number;
      /** raw `Retry-After` header, or null */
      retryAfter: string | null;
      /** raw `Date` header, or null: lets the core turn a Retry-After date into a wait without a device clock */
      date?: string | null;
      /** raw `Location` header, or null: the core decides whether a redirect is followed (never across origins) */
      location?: string | null;
      body: string;
    }
  | { kind: 'network'; message: string; maybeDelivered: boolean }
  | { kind: 'timeout'; maybeDelivered: boolean };

export type TimerHandle = unknown;

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Where log lines go: the host's sink, and each part of the agent's way to it. */
export type Log = (level: LogLevel, message: string) => void;

export type SampleValue = number | boolean | string;

/**
 * A stored sample, oldest first: its sequence number, resource, value and time (see `QueueStorage`). The
 * core returns false when it has no room for this sample: a backlog stops there, and gives it again later.
 */
export type StoredVisit = (seq: number, resource: number, value: SampleValue, at: number) => boolean | void;

/**
 * Optional durable storage for the queue; after a crash, `load` gives back every sample not yet
 * acknowledged, oldest first. Sequence numbers are assigned by the core, increase by one per accepted
 * sample, and survive restarts (the core continues from the number `load` returns).
 *
 * A sample's time `at` is the host's monotonic `now()` when it was accepted. The storage keeps it as it
 * likes and gives it back on this run's clock: a sample of an earlier run (another boot: the monotonic
 * clock started again) has a time only where the storage can convert it, through a wall clock both runs
 * knew; otherwise it comes back as NaN, and the core counts it `undated`.
 *
 * When it writes is the storage's choice (`spillEvery`). Without `spillEvery` the core appends every
 * sample as it accepts it, and a crash loses nothing whose `append` returned (a disk); a failed append
 * is counted in `storageErrors` and leaves that sample in memory only. With it, nothing is written while the service answers; once a flush has
 * failed, the queued samples not yet written are appended in one burst each time `spillEvery` more have
 * come in, and all of them when the application calls `agent.persist()` (before deep sleep) or `stop()`
 * leaves samples queued; acknowledgements are written only while the storage holds samples. Flash is
 * not worn by routine operation, and a crash loses at most the samples accepted since the last burst.
 *
 * **A backlog.** A storage that has `read` holds more than the queue's RAM: the RAM queue is a window onto
 * it (docs/durable-queue.md). Samples accepted while the window is full, or while older ones wait in
 * storage only, are appended and not kept in RAM; as batches leave, the oldest are read back into the
 * window. Nothing is dropped while the storage has room: its bound (`append` returns false) is where the
 * overflow policy applies. Such a storage's `load` visits no more than `max` samples, so a restart does
 * not read the backlog into RAM.
 */
export interface QueueStorage {
  /**
   * Visits the unacknowledged samples, oldest first (a backlog: at most `max` of them, until `visit`
   * returns false); returns the next sequence number to use.
   */
  load(visit: StoredVisit, max?: number): number;
  /**
   * Records one accepted sample. Returns false, writing nothing, when the storage is at its bound (a
   * backlog; a storage without a bound returns nothing). Throws if it could not be written.
   */
  append(seq: number, resource: number, value: SampleValue, at: number): boolean | void;
  /** Every sample with a sequence number ≤ `seq` is finished (delivered, set aside or dropped). */
  ack(seq: number): void;
  /** Releases files or handles; called by `stop()`. */
  close?(): void;
  /** Write only when needed, in bursts, every this many samples (an integer ≥ 1); see above. */
  readonly spillEvery?: number;
  /** Called after each burst of appends, so that a storage can commit a file once per burst. */
  commit?(): void;
  /**
   * Optional: an operation-4 request carrying `batch` is about to go out. Keep it until the next call,
   * in one small write that survives the process being killed; `batch` is reused, so copy what you keep.
   * After a restart it lets the agent read the batch back instead of sending it again blind.
   */
  sending?(batch: Readonly<InFlight>): void;
  /** Optional, after `load`: the batch `sending` kept last, or null. */
  inFlight?(): InFlight | null;
  /**
   * A backlog: visits at most `max` stored, unacknowledged samples with a sequence number ≥ `from`, oldest
   * first, until `visit` returns false; returns the sequence number to read from next time: the first
   * sample not taken, or the next sequence number when no sample is left. Throws if it cannot read.
   */
  read?(from: number, max: number, visit: StoredVisit): number;
  /**
   * A backlog at its bound, under drop-oldest: gives up the oldest whole unit of stored samples (a
   * segment) that holds none with a sequence number ≤ `after` (those the RAM window holds); returns how
   * many samples it gave up, 0 when no unit can go.
   */
  discard?(after: number): number;
  /** A backlog: the bytes it holds now, and its bound. */
  usedBytes?(): number;
  readonly maxBytes?: number;
}

/** A batch that went out in an operation-4 request (QueueStorage.sending). */
export interface InFlight {
  /** Sequence numbers of its first and last sample, and how many samples it holds. */
  firstSeq: number;
  lastSeq: number;
  count: number;
  /** Entries of `resources` and `lastIds` in use. */
  size: number;
  /** The batch's resources a read-back can decide, each with the newest feed id known before the request (-1: unknown). */
  resources: Uint32Array;
  lastIds: Float64Array;
}

/**
 * Memory a host lends the queue. `take(bytes)`: `bytes` zeroed bytes from an offset that is a multiple of
 * 8, asked as the agent is made and whenever the ring grows or shrinks; `give(region)`: a region the queue
 * moved out of, never used again. The region in use when the agent stops is the host's to take back.
 */
export interface QueueMemory {
  take(bytes: number): Uint8Array;
  give(region: Uint8Array): void;
}

export interface Host {
  request(req: HttpRequest): Promise<HttpResult>;
  /**
   * Resolves when the agent may make its next request. A host that paces the requests of many agents (a
   * gateway's devices toward one service) grants turns; the agent waits for one before it chooses and
   * builds a request, so a waiting agent holds no request. Without it, requests go at once.
   */
  turn?(): Promise<void>;
  /** Monotonic milliseconds; never goes back, unrelated to wall time. */
  now(): number;
  /** One-shot timer. */
  setTimer(ms: number, fn: () => void): TimerHandle;
  clearTimer(handle: TimerHandle): void;
  storage?: QueueStorage;
  /**
   * Optional: lends the queue the memory its arrays live in. A host that runs thousands of agents (a
   * gateway) lends regions of a few large buffers instead of thousands of small allocations, and the
   * queue's ring then grows with what it holds, from 32 samples up to its capacity, and shrinks back (see
   * QueueMemory). Without it the queue allocates its own buffer for its whole capacity at once.
   */
  memory?: QueueMemory;
  /** Log sink. Messages never contain the token. */
  log?(level: LogLevel, message: string): void;
}
