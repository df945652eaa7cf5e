// An answer's body, held in memory that never outgrows a bound the request sets, whatever the peer
// announces or sends; both HTTP hosts read into one. The bound is the request's `maxResponseBytes` (the
// largest answer it can honestly produce), within the host's own ceiling (`maxAnswerBytes`, what the
// device can hold beside the agent). A Content-Length within the bound sizes the body exactly, so an
// honest answer is held once; one beyond it is refused before a byte is read. Without one (a chunked
// answer, or one that ends with the connection) it starts at 1 KB, enough for most answers, and the
// first time that is not enough it goes to the bound in one step: a body never costs more than the bound
// and 1 KB, whatever arrives (doubling would hold half the bound and the bound at once). An answer longer
// than the bound is a garbled answer: the host drops the connection and reports the outcome unknown
// (`maybeDelivered`), and the core reads back. The body is decoded where it lies, without a copy.

/** The host's ceiling by default: a default batch of 100 samples is answered in about 10 KB. */
export const DEFAULT_MAX_ANSWER_BYTES = 16_384;

/** Where a body without a Content-Length starts. */
const FIRST_BYTES = 1024;

/** The bound of one request: its own, within the host's ceiling. */
export function answerBound(maxResponseBytes: number, ceiling: number): number {
  return Math.min(maxResponseBytes, ceiling);
}

/** Why an answer is dropped as garbled, for the trace and the core's message. */
export function tooLarge(bound: number): string {
  return 'answer longer than ' + bound + ' bytes (garbled): connection dropped';
}

export class AnswerBody {
  private bytes: Uint8Array | null = null;
  private length = 0;

  constructor(readonly bound: number) {}

  /** Sizes the body for an announced Content-Length; false (nothing allocated) for one beyond the bound or not a length. */
  expect(contentLength: string): boolean {
    const n = Number(contentLength);
    if (!(Number.isSafeInteger(n) && n >= 0 && n <= this.bound)) return false;
    if (n > 0) this.bytes = new Uint8Array(n);
    return true;
  }

  /** Appends `piece`; false when the body would outgrow the bound (the piece is not kept). */
  add(piece: ArrayBuffer): boolean {
    const end = this.length + piece.byteLength;
    if (end > this.bound) return false;
    let bytes = this.bytes;
    if (bytes === null || end > bytes.length) {
      const grown = new Uint8Array(bytes === null ? Math.min(this.bound, Math.max(FIRST_BYTES, end)) : this.bound);
      if (bytes !== null) grown.set(bytes.subarray(0, this.length));
      bytes = this.bytes = grown;
    }
    bytes.set(new Uint8Array(piece), this.length);
    this.length = end;
    return true;
  }

  /** The body read: its first `length` bytes of `bytes`; the body lets go of them. */
  take(): { bytes: ArrayBuffer; length: number } {
    const bytes = this.bytes;
    this.bytes = null;
    return { bytes: bytes === null ? new ArrayBuffer(0) : (bytes.buffer as ArrayBuffer), length: this.length };
  }
}
