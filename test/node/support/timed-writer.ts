// Run by the backlog test in its own process: appends samples 1, 2 and 3 stamped 2, 1 and 0 s before now on
// this process's monotonic clock, prints the wall clock of that now, and waits to be killed.
import { writeSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

import { openDurableQueue } from '../../../platforms/node/storage/durable-queue';

const queue = openDurableQueue(process.argv[2]);
const now = performance.now();
const wall = Date.now();
for (let k = 0; k < 3; k++) queue.append(k + 1, 1, k, now - (2 - k) * 1000);
writeSync(1, JSON.stringify({ wall }) + '\n');
setInterval(() => {}, 1000);
