// What the queue tests store: the crash test's writer and its checker agree on it without talking.
// Numbers, booleans and strings that need escaping, of many lengths.
import type { SampleValue } from '../../../src/core/host/host';

export function sampleFor(seq: number): { resource: number; value: SampleValue } {
  const resource = 1 + (seq % 7);
  switch (seq % 4) {
    case 0:
      return { resource, value: seq / 8 };
    case 1:
      return { resource, value: seq % 8 === 1 };
    case 2:
      return { resource, value: 'reading ' + seq + ' "é"\n\u2713' + 'x'.repeat(seq % 300) };
    default:
      return { resource, value: -seq };
  }
}

/** The writer acknowledges everything up to `seq - ACK_LAG` after each 25th append: a few segments stay owed. */
export const ACK_LAG = 300;

export function ackAfter(seq: number): number | null {
  return seq % 25 === 0 && seq > ACK_LAG ? seq - ACK_LAG : null;
}
