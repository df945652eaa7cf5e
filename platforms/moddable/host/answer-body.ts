// An answer's body, held in memory that never outgrows a bound the request sets, whatever the peer
// announces or sends. Each HTTP host reserves one at its creation, at its ceiling (`maxAnswerBytes`, what
// the device can hold beside the agent), and reads every answer into it: the host takes one request at a
// time (exchange.ts, `inTurn`), and an answer is decoded before the next exchange begins. So no answer,
// of any size, with a Content-Length or chunked, allocates anything for its body: the chunk heap's peak
// does not move under it (docs/moddable.md, "Answers: the bound"). The bound of one answer is the
// request's `maxResponseBytes` (the largest answer it can honestly produce) within the ceiling. A 2xx
// answer whose Content-Length is beyond it is refused before a byte is read; one that grows beyond it is
// a garbled answer: the host drops the connection and reports the outcome unknown (`maybeDelivered`), and
// the core reads back. Any other status is that status whatever the length of its body (the status line
// came first: a proxy's 5 MB error page is a 503): its first bytes, up to the bound, are kept for the
// message, and the rest is dropped with the connection (`isFailureStatus`, `room`, `takePrefix`). The body is
// decoded where it lies, without a copy.

/**
 * The host's ceiling by default, reserved for good. A default batch of 100 numbers is answered in about
 * 10 KB (the local service: 98 B a sample), 14.6 KB pretty-printed, 14 KB compact with the largest ids
 * and numbers: anything smaller would garble honest answers and read every full batch back.
 */
export const DEFAULT_MAX_ANSWER_BYTES = 16_384;

/** Why an answer is dropped as garbled, for the trace and the core's message. */
export function tooLarge(bound: number): string {
  return 'answer longer than ' + bound + ' bytes (garbled): connection dropped';
}

/** A status whose answer is that failure whatever its length: anything but a 2xx. */
export function isFailureStatus(status: number): boolean {
  return status < 200 || status > 299;
}

export class AnswerBody {
  private readonly bytes: Uint8Array;
  private length = 0;
  /** The bound of the answer being read. */
  bound = 0;

  /** Reserves `ceiling` bytes, once: every answer is read into them. */
  constructor(ceiling: number) {
    this.bytes = new Uint8Array(ceiling);
  }

  /** Starts an answer to a request that allows `maxResponseBytes`: its own bound, within the ceiling. */
  begin(maxResponseBytes: number): void {
    this.bound = Math.min(maxResponseBytes, this.bytes.length);
    this.length = 0;
  }

  /** Whether an announced Content-Length is a length within the bound. */
  expect(contentLength: string): boolean {
    const n = Number(contentLength);
    return Number.isSafeInteger(n) && n >= 0 && n <= this.bound;
  }

  /** Whether `count` more bytes stay within the bound: asked before they are read, an answer that outgrows it allocates nothing more. */
  fits(count: number): boolean {
    return this.length + count <= this.bound;
  }

  /** Appends `piece`; false when the body would outgrow the bound (the piece is not kept). */
  add(piece: ArrayBuffer): boolean {
    const end = this.length + piece.byteLength;
    if (end > this.bound) return false;
    this.bytes.set(new Uint8Array(piece), this.length);
    this.length = end;
    return true;
  }

  /** Bytes the bound still has room for. */
  get room(): number {
    return this.bound - this.length;
  }

  /** The body read: the first `length` bytes of `bytes`, valid until the next answer begins. */
  take(): { bytes: ArrayBuffer; length: number } {
    return { bytes: this.bytes.buffer as ArrayBuffer, length: this.length };
  }

  /**
   * The first bytes of a failure's body that was longer than the bound, without a character the bound
   * cut in two (it would not decode as UTF-8).
   */
  takePrefix(): { bytes: ArrayBuffer; length: number } {
    const b = this.bytes;
    let start = this.length;
    // Back to the first byte of the last character: at most 3 continuation bytes (10xxxxxx) before it.
    while (start > 0 && start > this.length - 4 && (b[start - 1] & 0xc0) === 0x80) start--;
    if (start > 0) {
      const lead = b[start - 1];
      const size = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
      if (start - 1 + size > this.length) this.length = start - 1;
    }
    return this.take();
  }
}
