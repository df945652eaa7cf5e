// A device program written against the public API (feed-agent and feed-agent/node), run by the backlog
// test in a process of its own: a Node agent with the durable queue in DIR and a queue of 256 samples in
// memory records RATE samples a second of one resource, run RUN's values being RUN × 1,000,000 + i, for
// RECORD_MS (or until it is killed), then waits until nothing is queued and stops. It reports on stdout,
// one JSON object a line, written before it goes on (a kill loses no report of what was accepted):
// `started`, `accepted` (the last value i accepted, after each tick), `stats` (every 500 ms, with its
// RSS), `log` lines, and `done`.
//   node backlog-device.mjs DIR URL PUBLIC_KEY TOKEN RESOURCE RUN RATE RECORD_MS
import { writeSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

import { createAgent } from '../../src/core/index';
import { createNodeHost, openDurableQueue } from '../../platforms/node/index';

const [dir, url, publicKey, token, resourceText, runText, rateText, recordText] = process.argv.slice(2);
const resource = Number(resourceText);
const run = Number(runText);
const rate = Number(rateText);
const recordMs = Number(recordText);
const TICK_MS = 10;

const report = (event: Record<string, unknown>): void => void writeSync(1, JSON.stringify(event) + '\n');

const opened = performance.now();
const agent = createAgent(
  createNodeHost({ storage: openDurableQueue(dir), log: (level, message) => report({ type: 'log', level, message }) }),
  { url, publicKey, token, resources: [resource], uplink: { queue: 256 } },
);
await agent.start();
const began = performance.now();
report({ type: 'started', ms: began - opened, ...agent.stats(), rss: process.memoryUsage.rss() });

let taken = 0;
let notQueued = 0;
const stats = setInterval(() => report({ type: 'stats', ...agent.stats(), rss: process.memoryUsage.rss() }), 500);
const ticks = setInterval(() => {
  const elapsed = performance.now() - began;
  const due = Math.floor((Math.min(elapsed, recordMs) * rate) / 1000);
  for (; taken < due; taken++) if (agent.record(resource, run * 1_000_000 + taken) !== 'queued') notQueued++;
  report({ type: 'accepted', last: taken - 1, notQueued });
  if (elapsed >= recordMs) void drain();
}, TICK_MS);

async function drain(): Promise<void> {
  clearInterval(ticks);
  while (agent.stats().queued > 0) await new Promise((resolve) => setTimeout(resolve, 100));
  clearInterval(stats);
  report({ type: 'done', ...(await agent.stop()) });
}
