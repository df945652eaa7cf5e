// The gateway over time, against the real local service and the embedded broker: a reload loses nothing,
// presence follows the field device (silence and last will) while its queue still drains, a broker that
// goes away under load is reconnected while delivery goes on, a refused token pauses its device alone,
// and requests toward the service are paced for the whole gateway.
import { connectAsync } from 'mqtt';
import type { MqttClient } from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';

import { parseGatewayConfig, startGateway } from '../../platforms/node/gateway';
import type { GatewayConfig } from '../../platforms/node/gateway';
import { paceRequests } from '../../platforms/node/gateway/pacing';
import type { RunningService } from '../../src/service';
import { AedesBroker, BAYS, resourceRecord, startLocalService, storedValues, tempDir, waitFor } from './support';

const [bay1, bay2, bay3] = BAYS;
const ENV = { T1: bay1.token, T2: bay2.token, T3: bay3.token, WRONG: 'not-the-token' };

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type DeviceJson = Record<string, unknown>;
const device = (b: (typeof BAYS)[number], token: string, extra: DeviceJson = {}): DeviceJson => ({
  name: b.name,
  publicKey: b.publicKey,
  tokenEnv: token,
  resources: [{ id: b.ids[0], mqtt: { topic: `${b.name}/temperature` } }],
  ...extra,
});

async function setup(devices: DeviceJson[], options: { now?: () => number; requestsPerSecond?: number } = {}) {
  const service = await startLocalService(options.now);
  cleanups.push(() => service.close());
  const broker = await AedesBroker.start();
  cleanups.push(() => broker.close());
  const q = tempDir('gw-life-');
  cleanups.push(q.remove);
  const configOf = (list: DeviceJson[]): GatewayConfig =>
    parseGatewayConfig(
      { service: { url: service.url, requestsPerSecond: options.requestsPerSecond ?? 200 }, queue: { dir: q.dir }, mqtt: { url: broker.url, clientId: 'life' }, metrics: false, status: { everyS: 0 }, devices: list },
      ENV,
      '/',
    );
  const lines: string[] = [];
  const gateway = await startGateway(configOf(devices), { log: (l) => lines.push(l), drainMs: 5000 });
  cleanups.push(() => gateway.stop());
  await waitFor('connected', () => gateway.stats().mqtt?.connected === true);
  const field = await connectAsync(broker.url, { clientId: 'field', protocolVersion: 4 });
  cleanups.push(() => field.endAsync(true));
  return { service, broker, gateway, field, lines, configOf };
}

/** Publishes 0.1, 0.2, … to `topic` every `ms` until stopped; `sent` holds what the broker acknowledged. */
function publishing(field: MqttClient, topic: string, ms: number) {
  const sent: string[] = [];
  let on = true;
  const done = (async () => {
    for (let i = 1; on; i++) {
      const v = String(i / 10);
      await field.publishAsync(topic, v, { qos: 1 });
      sent.push(v);
      await new Promise((r) => setTimeout(r, ms));
    }
  })();
  return {
    sent,
    stop: async () => {
      on = false;
      await done;
    },
  };
}

const stored = (s: RunningService, id: number) => storedValues(s.url, id);

describe('gateway lifecycle', () => {
  it('reloads without loss: a removed device drains and closes, an added one starts, a changed one goes on', async () => {
    const { service, gateway, field, lines, configOf } = await setup([device(bay1, 'T1'), device(bay2, 'T2')]);
    const one = publishing(field, 'Bay 1/temperature', 5);
    for (let i = 1; i <= 20; i++) await field.publishAsync('Bay 2/temperature', String(i), { qos: 1 });
    await waitFor('bay 1 flowing', async () => (await stored(service, bay1.ids[0])).length > 20);
    // Bay 2 removed (its 20 readings drain), Bay 3 added, Bay 1 changed (its agent restarts on the same queue).
    await gateway.reload(configOf([device(bay1, 'T1', { silenceS: 120 }), device(bay3, 'T3')]));
    for (let i = 1; i <= 5; i++) await field.publishAsync('Bay 3/temperature', String(i), { qos: 1 });
    await new Promise((r) => setTimeout(r, 500));
    await one.stop();
    await waitFor('bay 1 all stored', async () => (await stored(service, bay1.ids[0])).length >= one.sent.length);
    expect(await stored(service, bay1.ids[0])).toEqual(one.sent);
    expect(await stored(service, bay2.ids[0])).toEqual(Array.from({ length: 20 }, (_, i) => String(i + 1)));
    await waitFor('bay 3 stored', async () => (await stored(service, bay3.ids[0])).length >= 5);
    expect(await stored(service, bay3.ids[0])).toEqual(['1', '2', '3', '4', '5']);
    expect(gateway.stats().devices.map((d) => d.name)).toEqual(['Bay 1', 'Bay 3']);
    expect(lines.some((l) => /^Bay 2: removed from the config: queue drained \(0 left on disk\) and closed/.test(l))).toBe(true);
    // Bay 2's topic is no longer subscribed to: nothing more is stored for it.
    await field.publishAsync('Bay 2/temperature', '99', { qos: 1 });
    await new Promise((r) => setTimeout(r, 1500));
    expect(await stored(service, bay2.ids[0])).toHaveLength(20);
  });

  it('lets presence lapse when a field device goes silent or its last will comes, while its queue drains', async () => {
    let offsetMs = 0;
    const { service, gateway, field } = await setup(
      [device(bay1, 'T1', { silenceS: 1 }), device(bay2, 'T2', { silenceS: 3600, lastWill: { topic: 'Bay 2/status', payload: 'offline' } }), device(bay3, 'T3', { silenceS: 3600 })],
      { now: () => Date.now() + offsetMs },
    );
    for (const b of [bay1, bay3]) await field.publishAsync(`${b.name}/temperature`, '20', { qos: 1 });
    await waitFor('bay 1 silent past its limit', () => gateway.stats().devices[0].present === false, 5000);
    expect(gateway.stats().devices[2].present).toBe(true);
    expect(gateway.metrics()).toContain(`feed_gateway_device_present{device="Bay 1",public_key="${bay1.publicKey}"} 0`);
    // Bay 2: 600 readings (more than one batch of 500), then at once its will ("online" is not the
    // will's payload: ignored). What is still queued when the will came drains, silently.
    for (let i = 0; i < 600; i++) void field.publish('Bay 2/temperature', String(20 + (i % 100) / 10), { qos: 1 });
    void field.publish('Bay 2/status', 'online', { qos: 1 });
    await field.publishAsync('Bay 2/status', 'offline', { qos: 1 });
    await waitFor('bay 2 marked gone', () => gateway.stats().devices[1].present === false, 3000);
    await waitFor('a first batch of bay 2', async () => (await stored(service, bay2.ids[0])).length >= 500);
    // The platform's clock moves past the resources' lifetime (5 min): every resource shows dead until a
    // request that is not silent names it.
    offsetMs = 10 * 60_000;
    await waitFor('bay 2 drained', async () => (await stored(service, bay2.ids[0])).length === 600);
    const bay3Pub = publishing(field, 'Bay 3/temperature', 200);
    cleanups.push(() => bay3Pub.stop());
    await waitFor('bay 3, still heard, refreshed', async () => (await resourceRecord(service.url, bay3.publicKey, bay3.ids[0])).is_alive, 10_000);
    const bay2Record = await resourceRecord(service.url, bay2.publicKey, bay2.ids[0]);
    expect(bay2Record.is_alive).toBe(false);
    expect((await resourceRecord(service.url, bay1.publicKey, bay1.ids[0])).is_alive).toBe(false);
    // Heard again: presence is kept alive again.
    await field.publishAsync('Bay 1/temperature', '21', { qos: 1 });
    await waitFor('bay 1 alive again', async () => (await resourceRecord(service.url, bay1.publicKey, bay1.ids[0])).is_alive, 10_000);
  });

  it('reconnects to a broker that went away under load, delivering meanwhile, and loses nothing', async () => {
    const { service, broker, gateway, field } = await setup([device(bay1, 'T1', { queue: 4096 })], { requestsPerSecond: 2 });
    const pub = publishing(field, 'Bay 1/temperature', 2);
    await waitFor('a backlog', () => (gateway.stats().devices[0].queued ?? 0) > 200, 10_000);
    const port = broker.port;
    await broker.down();
    await waitFor('the gateway sees the broker gone', () => gateway.stats().mqtt?.connected === false);
    const deliveredAtDown = gateway.stats().devices[0].delivered;
    await waitFor('delivery goes on while the broker is down', () => gateway.stats().devices[0].delivered > deliveredAtDown, 5000);
    await broker.listen(port);
    await waitFor('reconnected', () => gateway.stats().mqtt?.connected === true, 15_000);
    await new Promise((r) => setTimeout(r, 500));
    await pub.stop();
    const sent = new Set(pub.sent);
    await waitFor('everything acknowledged by the broker stored', async () => {
      const got = new Set(await stored(service, bay1.ids[0]));
      return [...sent].every((v) => got.has(v));
    }, 30_000).catch(async (e) => {
      const got = new Set(await stored(service, bay1.ids[0]));
      const missing = [...sent].filter((v) => !got.has(v));
      throw new Error(`${(e as Error).message}: ${missing.length} of ${sent.size} missing (${missing.slice(0, 10).join(' ')}); ${JSON.stringify(gateway.stats())}`);
    });
    // It came back: a broker that is still starting may drop a first reconnect, so at least once more.
    expect(gateway.stats().mqtt?.connects).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it('holds acknowledgements once a backlog is at its bound, logs it once, and loses nothing', async () => {
    // A backlog of 2 KiB: about 40 readings, the queue's 16 in memory among them.
    const { service, gateway, field, lines } = await setup([device(bay1, 'T1', { queue: 16, overflowMiB: 0.002 })], { requestsPerSecond: 4 });
    const values = Array.from({ length: 300 }, (_, i) => String(i / 10));
    await Promise.all(values.map((v) => field.publishAsync('Bay 1/temperature', v, { qos: 1 })));
    await waitFor('all stored', async () => (await stored(service, bay1.ids[0])).length >= values.length, 30_000);
    expect(await stored(service, bay1.ids[0])).toEqual(values);
    expect(gateway.stats().mqtt?.heldForRoom).toBeGreaterThan(0);
    expect(lines.filter((l) => l.startsWith('Bay 1: its backlog is at its bound (0.002 MiB): acknowledgements to the broker wait'))).toHaveLength(1);
    expect(gateway.stats().devices[0]).toMatchObject({ lost: 0, delivered: 300, queued: 0 });
  }, 40_000);

  it('pauses a device whose token is refused, alone, and delivers its readings once the token is right', async () => {
    const { service, gateway, field, configOf, lines } = await setup([device(bay1, 'WRONG'), device(bay2, 'T2')]);
    for (let i = 1; i <= 10; i++) {
      await field.publishAsync('Bay 1/temperature', String(i), { qos: 1 });
      await field.publishAsync('Bay 2/temperature', String(i), { qos: 1 });
    }
    await waitFor('bay 2 stored', async () => (await stored(service, bay2.ids[0])).length === 10);
    await waitFor('bay 1 paused', () => gateway.stats().devices[0].authPaused);
    expect(gateway.stats().devices[0]).toMatchObject({ state: 'running', accepted: 10, queued: 10, delivered: 0 });
    expect(await stored(service, bay1.ids[0])).toEqual([]);
    expect(lines.join('\n')).not.toContain('not-the-token');
    // The right token, by a reload: the device's new agent sends what its durable queue kept.
    await gateway.reload(configOf([device(bay1, 'T1'), device(bay2, 'T2')]));
    expect(gateway.stats().devices.find((d) => d.name === bay1.name)?.restored).toBe(10);
    await waitFor('bay 1 delivered', async () => (await stored(service, bay1.ids[0])).length === 10);
    expect(await stored(service, bay1.ids[0])).toEqual(Array.from({ length: 10 }, (_, i) => String(i + 1)));
  });
});

describe('pacing', () => {
  it('keeps the whole gateway under its rate, first come first served', async () => {
    const at: number[] = [];
    const order: number[] = [];
    const paced = paceRequests(20);
    cleanups.push(() => paced.close());
    const start = performance.now();
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        paced.turn().then(() => {
          at.push(performance.now());
          order.push(i);
        }),
      ),
    );
    // 20 at once (the burst), then 20 a second: the last of 50 after about 1.5 s, and not before.
    expect(at[49] - start).toBeGreaterThanOrEqual(1400);
    expect(order).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });
});
