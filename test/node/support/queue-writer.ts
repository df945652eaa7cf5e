// Run by the crash test in its own process: appends samples to a durable queue in a loop, acknowledges
// older ones now and then, and prints each append and ack after it returned. The test kills it with SIGKILL at any moment.
import { writeSync } from 'node:fs';

import { openDurableQueue } from '../../../platforms/node/storage/durable-queue';
import type { FsyncPolicy } from '../../../platforms/node/storage/durable-queue';
import { ackAfter, sampleFor } from './samples';

const [dir, fsync] = process.argv.slice(2);
const queue = openDurableQueue(dir, { fsync: fsync as FsyncPolicy, fsyncIntervalMs: 5, segmentBytes: 4096 });
// A blocking write to the pipe: process.stdout may queue a line in memory, and the kill would lose it.
const report = (line: string): void => void writeSync(1, line + '\n');

let seq = queue.load(() => {});
report('ready ' + seq);
// Bounded, and far more than the test lets it reach before the kill.
for (let i = 0; i < 1_000_000; i++, seq++) {
  const { resource, value } = sampleFor(seq);
  queue.append(seq, resource, value, NaN);
  report('appended ' + seq);
  const upTo = ackAfter(seq);
  if (upTo !== null) {
    queue.ack(upTo);
    report('acked ' + upTo);
  }
}
