// The durable queue keeps the batch out in a request (QueueStorage.sending) in a file of its own; after
// a reopen, inFlight() gives back the last one written, or null when there is none or it is damaged.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import type { InFlight } from '../../src/core/host/host';
import { openDurableQueue } from '../../platforms/node/storage/durable-queue';
import { IN_FLIGHT_NAME } from '../../platforms/node/storage/in-flight-file';

const scratch = mkdtempSync(join(tmpdir(), 'feed-agent-in-flight-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => join(scratch, 'q' + dirs++);

/** A batch as the core hands it over: typed arrays larger than the entries in use. */
function batch(firstSeq: number, count: number, baselines: [number, number][]): InFlight {
  const resources = new Uint32Array(8).fill(99);
  const lastIds = new Float64Array(8).fill(99);
  baselines.forEach(([r, id], j) => {
    resources[j] = r;
    lastIds[j] = id;
  });
  return { firstSeq, lastSeq: firstSeq + count - 1, count, size: baselines.length, resources, lastIds };
}

const plain = (b: InFlight | null) =>
  b === null ? null : { firstSeq: b.firstSeq, lastSeq: b.lastSeq, count: b.count, resources: [...b.resources.slice(0, b.size)], lastIds: [...b.lastIds.slice(0, b.size)] };

function reopened(dir: string): InFlight | null {
  const queue = openDurableQueue(dir);
  try {
    return queue.inFlight();
  } finally {
    queue.close();
  }
}

describe('the batch out in a request', () => {
  it('is none in a new queue', () => {
    expect(reopened(freshDir())).toBeNull();
  });

  it('comes back after a reopen as the last one written, only the entries in use', () => {
    const dir = freshDir();
    const queue = openDurableQueue(dir);
    queue.sending(batch(1, 500, [[73, 1234], [74, -1], [75, 0]]));
    // A shorter record over a longer one: what is left of the longer one is not read.
    queue.sending(batch(501, 25, [[73, 1734]]));
    queue.close();
    expect(plain(reopened(dir))).toEqual({ firstSeq: 501, lastSeq: 525, count: 25, resources: [73], lastIds: [1734] });
  });

  it('reads as none when a byte of it is wrong', () => {
    const dir = freshDir();
    const queue = openDurableQueue(dir);
    queue.sending(batch(7, 3, [[73, 40]]));
    queue.close();
    const path = join(dir, IN_FLIGHT_NAME);
    const bytes = readFileSync(path);
    for (let i = 0; i < bytes.indexOf(0x0a); i++) {
      const damaged = Buffer.from(bytes);
      damaged[i] ^= 0x01;
      writeFileSync(path, damaged);
      expect(reopened(dir), 'byte ' + i + ' flipped').toBeNull();
    }
    writeFileSync(path, bytes.subarray(0, 12));
    expect(reopened(dir), 'torn').toBeNull();
  });
});
