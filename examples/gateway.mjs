// A gateway: one Node process running one agent per device, each with its own durable queue, against the
// local service seeded with three devices (gateway-seed.json). Run `npm run build` first, then
//   node examples/gateway.mjs [SECONDS]
// It feeds every device's temperature and humidity, prints commands sent to the vents, shows each
// agent's counts once a second, stops them all with a drain after SECONDS (default 5) and exits 0 when
// every accepted reading was delivered. See docs/gateway.md.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createAgent } from 'feed-agent';
import { createNodeHost, openDurableQueue } from 'feed-agent/node';

const here = import.meta.dirname;
const seedFile = join(here, 'gateway-seed.json');
const seconds = Number(process.argv[2] ?? 5);
// Subtype ids of the seed: what each resource of a device is.
const TEMPERATURE = 5, HUMIDITY = 6, VENT = 10;

// The devices this gateway serves. A real gateway reads them from its own configuration; here they are the
// seed's, so the local service knows them.
const devices = JSON.parse(readFileSync(seedFile, 'utf8')).devices;

const service = await startLocalService();
// It could not start (better-sqlite3 not installed, …) and has said why on stderr: nothing to add.
if (service === null) process.exit(1);
const agents = devices.map((device, i) => {
  const role = (subtype) => device.resources.find((r) => r.id_resource_subtype === subtype).id_resource;
  // One host per device: the HTTP connection pool is shared by the process, the queue directory is not.
  const host = createNodeHost({
    storage: openDurableQueue(join('.feed-agent', 'gateway', device.public_key)),
    log: (level, message) => console.log(`${device.name}: ${level}: ${message}`),
  });
  const agent = createAgent(host, {
    url: service.url,
    publicKey: device.public_key,
    token: device.token,
    sensors: [
      // A real gateway reads its field bus here (Modbus, BLE, a serial line); a read may return a promise.
      { resource: role(TEMPERATURE), every: 500, read: () => Math.round((21 + i + 2 * Math.sin(Date.now() / 10_000)) * 10) / 10 },
      { resource: role(HUMIDITY), every: 1000, read: () => Math.round(55 + 10 * Math.random()) },
    ],
    actuators: [
      { resource: role(VENT), every: 2000, handle: (open) => console.log(`${device.name}: vent ${open ? 'opens' : 'closes'}`) },
    ],
    uplink: { flushMs: 1000, startJitterMs: 500 },
  });
  return { name: device.name, agent };
});

await Promise.all(agents.map(({ agent }) => agent.start()));
console.log(`${agents.length} agents running against ${service.url} for ${seconds} s`);
const ticker = setInterval(() => {
  console.log(agents.map(({ name, agent }) => `${name}: queued ${agent.stats().queued}, sent ${agent.stats().sent}`).join(' | '));
}, 1000);
await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
clearInterval(ticker);

// Stop every agent together: each stops sampling and drains its own queue, bounded by the timeout.
const results = await Promise.all(agents.map(({ agent }) => agent.stop({ flush: true, timeoutMs: 10_000 })));
let ok = true;
results.forEach((stats, i) => {
  ok &&= stats.queued === 0 && stats.droppedOverflow === 0;
  console.log(`${agents[i].name}: accepted ${stats.accepted}, delivered ${stats.sent}, still queued ${stats.queued}`);
});
service.child.kill();
process.exitCode = ok ? 0 : 1;

/** `feed-agent serve` with the gateway seed on a free loopback port; resolves with its URL, or null if it exited first. */
function startLocalService() {
  const cli = join(here, '..', 'dist', 'cli.js');
  const child = spawn(process.execPath, [cli, 'serve', '--port', '0', '--seed', seedFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('exit', () => resolve(null));
    createInterface({ input: child.stdout }).once('line', (line) => {
      const url = /^listening on (\S+)$/.exec(line)?.[1];
      if (url === undefined) reject(new Error(`unexpected first line from feed-agent serve: ${line}`));
      else resolve({ url, child });
    });
  });
}
