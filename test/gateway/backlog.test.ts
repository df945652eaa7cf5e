// A device whose token is refused pauses alone: once its queue in memory is full, its readings wait in its
// backlog on disk (its durable queue) and are acknowledged, so the other devices behind the same broker
// connection keep flowing. Once its token is accepted, the backlog is delivered, oldest first, each
// reading once. Modbus readings polled while the service is away wait in the backlog too, none lost.
import { connectAsync } from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';

import { parseGatewayConfig, startGateway } from '../../platforms/node/gateway';
import type { GatewayConfig } from '../../platforms/node/gateway';
import { FaultProxy } from '../support/fault-proxy';
import { BAYS, ModbusDevice, Mosquitto, mosquittoPath, startLocalService, storedValues, tempDir, waitFor } from './support';

const mosquitto = mosquittoPath();
const [bay1, bay2] = BAYS;
const ENV = { T1: bay1.token, T2: bay2.token, WRONG: 'not-the-token' };

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const device = (b: (typeof BAYS)[number], token: string, extra: Record<string, unknown> = {}) => ({
  name: b.name,
  publicKey: b.publicKey,
  tokenEnv: token,
  resources: [{ id: b.ids[0], mqtt: { topic: `${b.name}/temperature` } }],
  ...extra,
});

/**
 * A broker, the local service and a gateway of bay 1 (its token refused, `bay1Extra` its other settings)
 * and bay 2, both running, and a field client publishing to the broker; `configOf` gives the config with
 * bay 1's token named.
 */
async function twoBays(prefix: string, mqtt: Record<string, unknown>, bay1Extra: Record<string, unknown>) {
  const d = tempDir(prefix);
  cleanups.push(d.remove);
  const broker = await Mosquitto.start(mosquitto as string, d.dir);
  cleanups.push(() => broker.stop());
  const service = await startLocalService();
  cleanups.push(() => service.close());
  const configOf = (token: string): GatewayConfig =>
    parseGatewayConfig(
      { service: { url: service.url }, queue: { dir: d.dir }, mqtt: { url: broker.url, ...mqtt }, metrics: false, status: { everyS: 0 }, devices: [device(bay1, token, bay1Extra), device(bay2, 'T2')] },
      ENV,
      '/',
    );
  const lines: string[] = [];
  const gateway = await startGateway(configOf('WRONG'), { log: (l) => lines.push(l) });
  cleanups.push(() => gateway.stop());
  await waitFor('connected', () => gateway.stats().mqtt?.connected === true);
  await waitFor('both running', () => gateway.stats().devices.every((x) => x.state === 'running'));
  const field = await connectAsync(broker.url, { clientId: 'field', protocolVersion: 4 });
  cleanups.push(() => field.endAsync(true));
  return { service, configOf, lines, gateway, field };
}

describe.skipIf(mosquitto === null)(`the backlog${mosquitto === null ? ' (skipped: /usr/sbin/mosquitto is not installed)' : ''}`, () => {
  it('keeps a device whose token is refused from holding back the others on its broker connection, and delivers all of it later, in order, once', async () => {
    // Default settings but bay 1's small queue in memory: its backlog on disk takes what the queue cannot.
    const { service, configOf, lines, gateway, field } = await twoBays('gw-backlog-', { clientId: 'backlog' }, { queue: 16 });
    // Bay 1 gets 25 times its queue, bay 2 its messages in between.
    const one: string[] = [];
    const two: string[] = [];
    for (let i = 1; i <= 400; i++) {
      const v = String(i / 10);
      await field.publishAsync('Bay 1/temperature', v, { qos: 1 });
      one.push(v);
      if (i % 4 === 0) {
        await field.publishAsync('Bay 2/temperature', v, { qos: 1 });
        two.push(v);
      }
    }
    await waitFor('every bay 2 message stored while bay 1 is refused', async () => (await storedValues(service.url, bay2.ids[0])).length >= two.length, 15_000).catch(async (e) => {
      throw new Error(`${(e as Error).message}: ${(await storedValues(service.url, bay2.ids[0])).length} of ${two.length}; ${JSON.stringify(gateway.stats().devices)}`);
    });
    expect(await storedValues(service.url, bay2.ids[0])).toEqual(two);
    await waitFor('bay 1 paused', () => gateway.stats().devices[0].authPaused);
    const paused = gateway.stats().devices[0];
    expect(paused).toMatchObject({ authPaused: true, queued: one.length, backlog: one.length - 16, delivered: 0, lost: 0 });
    expect(gateway.stats().mqtt?.heldForRoom).toBe(0);
    expect(gateway.metrics()).toContain(`feed_gateway_device_backlog{device="Bay 1",public_key="${bay1.publicKey}"} ${one.length - 16}`);
    expect(await storedValues(service.url, bay1.ids[0])).toEqual([]);
    expect(lines.filter((l) => l.includes('at its bound'))).toEqual([]);
    // The right token, by a reload: the new agent reads its queue in memory from the backlog, and sends all of it.
    await gateway.reload(configOf('T1'));
    await waitFor('all of bay 1 stored', async () => (await storedValues(service.url, bay1.ids[0])).length >= one.length, 30_000);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await storedValues(service.url, bay1.ids[0])).toEqual(one);
    expect(gateway.stats().devices[0]).toMatchObject({ restored: one.length, backlog: 0, queued: 0, lost: 0 });
  }, 60_000);
  it('at its bound holds the broker connection: the other device waits too, and once there is room all of it arrives, in order, once, across the reconnections a long hold brings', async () => {
    // Bay 1: a backlog of 2 KiB (about 40 readings) and its token refused, so nothing leaves it until the
    // reload. A keep-alive of 1 s: mqtt.js reads no ping answer behind a message that waits, so it
    // reconnects every 1.5 s of the hold, and the broker hands over again what was not acknowledged.
    const { service, configOf, lines, gateway, field } = await twoBays('gw-bound-', { clientId: 'bound', keepaliveS: 1 }, { queue: 16, overflowMiB: 0.002 });
    const one = Array.from({ length: 100 }, (_, i) => String(i / 10));
    const two = Array.from({ length: 20 }, (_, i) => String(i));
    for (let i = 0; i < one.length; i++) {
      await field.publishAsync('Bay 1/temperature', one[i], { qos: 1 });
      if (i % 5 === 4) await field.publishAsync('Bay 2/temperature', two[(i - 4) / 5], { qos: 1 });
    }
    await waitFor('bay 1 at its bound', () => (gateway.stats().mqtt?.heldForRoom ?? 0) > 0);
    const atBound = gateway.stats().devices[0].queued;
    // Bay 2's messages behind the one that waits wait with it: what bay 2 stored stops short of its 20.
    await new Promise((r) => setTimeout(r, 4000));
    const bay2Stored = (await storedValues(service.url, bay2.ids[0])).length;
    expect(bay2Stored).toBeLessThan(two.length);
    expect(gateway.stats().devices[0]).toMatchObject({ queued: atBound, delivered: 0, lost: 0 });
    expect(gateway.stats().mqtt?.connects, 'reconnections while the message waits').toBeGreaterThan(1);
    expect(lines.filter((l) => l.startsWith('Bay 1: its backlog is at its bound (0.002 MiB): acknowledgements to the broker wait'))).toHaveLength(1);
    // The right token: bay 1 delivers, room comes, and everything the broker kept follows.
    await gateway.reload(configOf('T1'));
    await waitFor('all stored', async () => (await storedValues(service.url, bay1.ids[0])).length >= one.length && (await storedValues(service.url, bay2.ids[0])).length >= two.length, 30_000);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await storedValues(service.url, bay1.ids[0])).toEqual(one);
    expect(await storedValues(service.url, bay2.ids[0])).toEqual(two);
    expect(gateway.stats().devices[0]).toMatchObject({ queued: 0, lost: 0 });
    console.log(`at the bound: bay 1 held ${atBound} readings, bay 2 had stored ${bay2Stored} of ${two.length}; ${gateway.stats().mqtt?.connects} connections, ${gateway.stats().mqtt?.duplicatesSkipped} redelivered messages recognised`);
  }, 60_000);
});

describe('the backlog, Modbus', () => {
  it('keeps what is polled while the queue is full (the service down), and delivers all of it in order once it is back', async () => {
    const d = tempDir('gw-backlog-modbus-');
    cleanups.push(d.remove);
    const service = await startLocalService();
    cleanups.push(() => service.close());
    // The service answers 503 to every batch until the proxy's faults are cleared. Its start-up lookup is
    // slow: polls made while the device starts are not counted as readings nobody keeps.
    const proxy = await FaultProxy.start(service.url);
    cleanups.push(() => proxy.close());
    proxy.faults([
      { op: 'read', action: { do: 'slow', ms: 1000 } },
      { op: 'create', always: true, action: { do: 'status', status: 503 } },
    ]);
    const plc = await ModbusDevice.start();
    cleanups.push(() => plc.down());
    // The register counts up faster than it is polled: every poll's reading is larger than the one before.
    let value = 0;
    const timer = setInterval(() => (plc.holding[0] = ++value), 5);
    cleanups.push(() => clearInterval(timer));
    const config = parseGatewayConfig(
      {
        service: { url: proxy.url },
        queue: { dir: d.dir },
        modbus: { plc: { host: '127.0.0.1', port: plc.port } },
        metrics: false,
        status: { everyS: 0 },
        devices: [{ name: 'Bay 1', publicKey: bay1.publicKey, tokenEnv: 'T1', queue: 16, resources: [{ id: bay1.ids[0], modbus: { source: 'plc', kind: 'holding-register', address: 0, scale: 0.001, everyMs: 10 } }] }],
      },
      ENV,
      '/',
    );
    const gateway = await startGateway(config, { log: () => {} });
    cleanups.push(() => gateway.stop());
    await waitFor('polled well past its queue', () => gateway.stats().devices[0].backlog >= 50);
    expect(gateway.stats().devices[0]).toMatchObject({ lost: 0, delivered: 0 });
    // The service is back; polling goes on a moment, then the field device goes away and the rest drains.
    proxy.clearFaults();
    await new Promise((r) => setTimeout(r, 500));
    await plc.down();
    await waitFor('all delivered', () => gateway.stats().devices[0].queued === 0, 20_000);
    const polled = gateway.stats().sources[0].messagesIn;
    const stored = (await storedValues(service.url, bay1.ids[0])).map(Number);
    expect(gateway.stats().devices[0]).toMatchObject({ lost: 0, refused: 0 });
    expect(stored).toHaveLength(polled);
    expect(stored.every((v, i) => i === 0 || v > stored[i - 1]), 'stored in the order polled').toBe(true);
  }, 40_000);
});
