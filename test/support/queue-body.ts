// A queue's samples for tests: pushed as the intake pushes them, measured, and their operation-4 body,
// what the uplink sends (batch-body.ts), for any range, with the range checked.
import type { SampleValue } from '../../src/core/host/host';
import { BatchBody } from '../../src/core/queue/batch-body';
import type { SampleQueue } from '../../src/core/queue/queue';
import { poolBytes } from '../../src/core/wire/utf8';

/** `queue.push` of a sample measured as the intake measures it (`poolBytes`); returns push's result. */
export function push(queue: SampleQueue, resource: number, value: SampleValue, at: number, seq: number): number {
  return queue.push(resource, value, at, seq, poolBytes(value));
}

// One encoder per queue, as the uplink keeps one: its texts are built as entries are claimed.
const bodies = new WeakMap<SampleQueue, BatchBody>();

function bodyOf(queue: SampleQueue): BatchBody {
  let body = bodies.get(queue);
  if (body === undefined) bodies.set(queue, (body = new BatchBody(queue)));
  return body;
}

/** The body of samples [from, from + count) (all of them by default); RangeError outside the queue. */
export function encode(queue: SampleQueue, from = 0, count = queue.length - from): string {
  if (!(from >= 0 && count >= 0 && from + count <= queue.length) || from % 1 !== 0 || count % 1 !== 0) {
    throw new RangeError('encode range ' + from + '+' + count + ' is outside the queue (length ' + queue.length + ')');
  }
  // The lock as it is, its samples put back in order.
  queue.lock(queue.inFlight);
  return bodyOf(queue).encode(from, count);
}

/** The body of the first `count` samples, locked (a larger lock staying), as the head locks them and the uplink encodes them to send. */
export function take(queue: SampleQueue, count: number): string {
  queue.lock(Math.max(count, queue.inFlight));
  return bodyOf(queue).encode(0, count);
}
