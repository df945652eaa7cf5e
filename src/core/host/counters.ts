// The agent's running totals, shared by its parts and read by stats().
export interface Counters {
  /** Samples the service stored. */
  sent: number;
  /** Operation-4 requests that were answered with success. */
  batches: number;
  /** Transient failures that were retried. */
  retries: number;
  /** Readings refused before queuing: a read that threw, a non-finite number, an object, a broken restriction. */
  rejectedInvalid: number;
  /** Samples the service refused, set aside so the rest could flow. */
  setAside: number;
  /** Samples in requests whose outcome was unknown (a timeout, a reset, a garbled answer). */
  ambiguous: number;
  /** Of those, samples a read-back showed stored: they left the queue without being sent again (and count as sent). */
  reconciled: number;
  /**
   * Of those, samples sent again without knowing whether they had been stored: reconciliation was off or
   * could not decide, its read-back failed, or flush() read back early. The only samples that may be
   * stored twice (see README, Guarantees).
   */
  unresolved: number;
  /** Command handler runs. */
  commands: number;
  commandErrors: number;
  /** Durable storage writes that failed (the sample stayed queued in memory). */
  storageErrors: number;
  /**
   * Samples of an earlier run that durable storage gave back without a time on this run's clock (no wall
   * clock to carry it across the restart): they are sent without an age (`uplink.sendAge`).
   */
  undated: number;
  lastError: string | null;
}

export function createCounters(): Counters {
  return {
    sent: 0, batches: 0, retries: 0, rejectedInvalid: 0, setAside: 0,
    ambiguous: 0, reconciled: 0, unresolved: 0, commands: 0, commandErrors: 0, storageErrors: 0, undated: 0, lastError: null,
  };
}
