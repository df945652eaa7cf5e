// Report by exception through the gateway, with Debian's mosquitto: a door contact published every 100 ms,
// with a rule of its own in the config (`report`: any change, and a heartbeat), stores only its changes
// and its heartbeats; every other reading is acknowledged to the broker and held back, counted.
import { connectAsync } from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';

import { parseGatewayConfig, startGateway } from '../../platforms/node/gateway';
import { DEMO_PUBLIC_KEY, DEMO_SEED, DEMO_TOKEN, startService } from '../../src/service';
import { Mosquitto, mosquittoPath, storedValues, tempDir, waitFor } from './support';

const mosquitto = mosquittoPath();
const DOOR = 101;
const HEARTBEAT_MS = 1000;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The values with each run of equal ones cut to its first. */
const changes = (values: string[]): string[] => values.filter((v, i) => i === 0 || v !== values[i - 1]);

describe.skipIf(mosquitto === null)(`report by exception${mosquitto === null ? ' (skipped: /usr/sbin/mosquitto is not installed)' : ''}`, () => {
  it('stores a door contact published every 100 ms only when it changes, and at its heartbeat', async () => {
    const d = tempDir('gw-report-');
    cleanups.push(d.remove);
    const broker = await Mosquitto.start(mosquitto as string, d.dir);
    cleanups.push(() => broker.stop());
    // The demo greenhouse: resource 101 is its door contact (0 closed, 1 open).
    const service = await startService({ seed: DEMO_SEED, dashboard: {} });
    cleanups.push(() => service.close());
    const config = parseGatewayConfig(
      {
        service: { url: service.url },
        queue: { dir: d.dir },
        mqtt: { url: broker.url, clientId: 'report' },
        metrics: false,
        status: { everyS: 0 },
        devices: [{ name: 'greenhouse', publicKey: DEMO_PUBLIC_KEY, tokenEnv: 'TOKEN', resources: [{ id: DOOR, mqtt: { topic: 'greenhouse/door' }, report: { deadband: 0, heartbeatMs: HEARTBEAT_MS } }] }],
      },
      { TOKEN: DEMO_TOKEN },
      '/',
    );
    const gateway = await startGateway(config, { log: () => {} });
    cleanups.push(() => gateway.stop());
    await waitFor('running', () => gateway.stats().devices[0].state === 'running' && gateway.stats().mqtt?.connected === true);
    const field = await connectAsync(broker.url, { clientId: 'door', protocolVersion: 4 });
    cleanups.push(() => field.endAsync(true));
    // Closed 2.5 s, open 0.5 s, closed 2.5 s: two heartbeats or more in each closed stretch.
    const published = [...Array(25).fill('0'), ...Array(5).fill('1'), ...Array(25).fill('0')] as string[];
    const started = performance.now();
    for (const v of published) {
      await field.publishAsync('greenhouse/door', v, { qos: 1 });
      await new Promise((r) => setTimeout(r, 100));
    }
    const elapsedMs = performance.now() - started;
    await gateway.stop();
    const stored = await storedValues(service.url, DOOR);
    const stats = gateway.stats().devices[0];
    // Every change, in order; what else is stored repeats the value before it: a heartbeat.
    expect(changes(stored)).toEqual(changes(published));
    const heartbeats = stored.length - changes(stored).length;
    expect(heartbeats).toBeGreaterThanOrEqual(2);
    // No more than one a heartbeat's interval, over the time it ran (and the one its stop may bring).
    expect(heartbeats).toBeLessThanOrEqual(Math.ceil(elapsedMs / HEARTBEAT_MS) + 1);
    expect(gateway.stats().sources[0].messagesIn).toBe(published.length);
    // What the rule held back was acknowledged all the same, counted, and never stored.
    expect(stats.heldBack).toBe(published.length - changes(published).length);
    expect(stats).toMatchObject({ delivered: stored.length, queued: 0, lost: 0, refused: 0 });
    console.log(`report by exception: ${published.length} published over ${Math.round(elapsedMs)} ms, ${stored.length} stored (${heartbeats} heartbeats), ${stats.heldBack} held back`);
  }, 30_000);
});
