// A device program written against the public API (feed-agent and feed-agent/node), run by the network
// fault matrix (test/support/netfault-rig.ts) in a process of its own: a Node agent with the durable queue
// in DIR and the default settings samples a counter sensor (0, 1, 2, … every EVERY ms) until its standard
// input ends, then stops, delivering what is queued, and writes the counter's ledger (DIR/counters.json,
// as `feed-agent simulate` does: the highest value accepted) for the service's side to be counted against.
// With `startOnly` it only starts and stops. With `caFile` it trusts that CA; with `dns`, names are looked
// up at that DNS server alone (a resolver of the application's own, given as undici's `connect.lookup`).
// It reports on stdout, one JSON object a line: `started` (how long start() took) or `start-failed`,
// `stats` (every STATS_MS, with `read`, the values the sensor gave), `log` lines, and `done`.
//   node netfault-device.mjs '{"dir":…,"url":…,"publicKey":…,"token":…,"resource":…,"every":…}'
import { writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Agent } from 'undici';

import { createAgent } from '../../src/core/index';
import { createNodeHost, openDurableQueue } from '../../platforms/node/index';
import { lookupVia } from '../support/loopback-dns';

export interface DeviceArgs {
  dir: string;
  url: string;
  publicKey: string;
  token: string;
  resource: number;
  every: number;
  startOnly?: boolean;
  caFile?: string;
  dns?: string;
}

const STATS_MS = 100;

const args = JSON.parse(process.argv[2]) as DeviceArgs;
const report = (event: Record<string, unknown>): void => void writeSync(1, JSON.stringify({ at: Date.now(), ...event }) + '\n');

let read = 0;
const http = args.dns !== undefined ? { dispatcher: new Agent({ connect: { lookup: lookupVia(args.dns) } }) } : args.caFile !== undefined ? { caFile: args.caFile } : {};
const agent = createAgent(
  createNodeHost({ storage: openDurableQueue(args.dir), log: (level, message) => report({ type: 'log', level, message }), ...http }),
  { url: args.url, publicKey: args.publicKey, token: args.token, sensors: [{ resource: args.resource, every: args.every, read: () => read++ }] },
);

const began = performance.now();
try {
  await agent.start();
  report({ type: 'started', ms: performance.now() - began });
} catch (e) {
  report({ type: 'start-failed', ms: performance.now() - began, message: String(e) });
}
if (args.startOnly === true) {
  await agent.stop({ flush: false });
  process.exit(0);
}

const stats = setInterval(() => report({ type: 'stats', read, ...agent.stats() }), STATS_MS);
process.stdin.resume();
process.stdin.on('end', () => void finish());

async function finish(): Promise<void> {
  const last = await agent.stop({ flush: true, timeoutMs: 60_000 });
  clearInterval(stats);
  writeFileSync(join(args.dir, 'counters.json'), JSON.stringify({ [args.resource]: last.accepted - 1 }));
  report({ type: 'done', read, ...last });
  process.exit(0);
}
