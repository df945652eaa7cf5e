// MQTT in, end to end: readings published to a real broker (the embedded aedes, and Debian's mosquitto
// where it is installed) are stored by the real local service with the right resource, value and order;
// bad input is counted and logged once per topic and stops nothing; commands go out to a topic at QoS 1.
import { connectAsync } from 'mqtt';
import type { MqttClient } from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';

import { parseGatewayConfig, startGateway } from '../../platforms/node/gateway';
import type { Gateway } from '../../platforms/node/gateway';
import type { RunningService } from '../../src/service';
import { killAll } from '../support/children';
import { AedesBroker, BAYS, Mosquitto, mosquittoPath, startLocalService, storedValues, tempDir, waitFor } from './support';

const ENV = { BAY1_TOKEN: BAYS[0].token, BAY2_TOKEN: BAYS[1].token };
const [bay1, bay2] = BAYS;

function config(serviceUrl: string, brokerUrl: string, queueDir: string, extra: { subscribe?: string[] } = {}) {
  return parseGatewayConfig(
    {
      service: { url: serviceUrl, requestsPerSecond: 200 },
      queue: { dir: queueDir },
      mqtt: { url: brokerUrl, clientId: 'test-gateway', ...extra },
      metrics: { port: 0 },
      status: { everyS: 0 },
      devices: [
        {
          name: 'bay-1',
          publicKey: bay1.publicKey,
          tokenEnv: 'BAY1_TOKEN',
          resources: [
            { id: bay1.ids[0], mqtt: { topic: 'site/bay1/temperature' } },
            { id: bay1.ids[1], mqtt: { topic: 'site/bay1/env', field: 'humidity' } },
            { id: bay1.ids[2], command: { mqtt: { topic: 'site/bay1/vent/set' }, everyMs: 200 } },
          ],
        },
        {
          name: 'bay-2',
          publicKey: bay2.publicKey,
          tokenEnv: 'BAY2_TOKEN',
          resources: [{ id: bay2.ids[0], mqtt: { topic: 'site/+/bay2/#' } }],
        },
      ],
    },
    ENV,
    '/',
  );
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  killAll();
});

/** The local service, a broker (aedes, or mosquitto where asked) and a queue folder, all closed after the test. */
async function world(broker: 'aedes' | 'mosquitto'): Promise<{ service: RunningService; url: string; dir: string; mosquitto?: Mosquitto }> {
  const service = await startLocalService();
  cleanups.push(() => service.close());
  const q = tempDir('gw-mqtt-');
  cleanups.push(q.remove);
  if (broker === 'mosquitto') {
    const m = await Mosquitto.start(mosquittoPath() as string, q.dir);
    cleanups.push(() => m.stop());
    return { service, url: m.url, dir: q.dir, mosquitto: m };
  }
  const b = await AedesBroker.start();
  cleanups.push(() => b.close());
  return { service, url: b.url, dir: q.dir };
}

async function publisher(url: string): Promise<MqttClient> {
  const c = await connectAsync(url, { clientId: 'field-' + Math.random().toString(16).slice(2), protocolVersion: 4 });
  cleanups.push(() => c.endAsync());
  return c;
}

async function runScenario(service: RunningService, brokerUrl: string, queueDir: string): Promise<{ gateway: Gateway; lines: string[] }> {
  const lines: string[] = [];
  const gateway = await startGateway(config(service.url, brokerUrl, queueDir, { subscribe: ['site/#'] }), { log: (l) => lines.push(l) });
  cleanups.push(() => gateway.stop());
  await waitFor('the gateway to connect', () => gateway.stats().mqtt?.connected === true);
  const field = await publisher(brokerUrl);
  const temps = Array.from({ length: 50 }, (_, i) => 15 + i / 10);
  for (let i = 0; i < temps.length; i++) {
    await field.publishAsync('site/bay1/temperature', String(temps[i]), { qos: 1 });
    await field.publishAsync('site/bay1/env', JSON.stringify({ humidity: 40 + i }), { qos: 1 });
    await field.publishAsync(`site/east/bay2/t${i % 3}`, String(20 + i), { qos: 1 });
  }
  await waitFor('every reading stored', async () => (await storedValues(service.url, bay2.ids[0])).length >= 50 && (await storedValues(service.url, bay1.ids[1])).length >= 50);
  expect(await storedValues(service.url, bay1.ids[0])).toEqual(temps.map(String));
  expect(await storedValues(service.url, bay1.ids[1])).toEqual(temps.map((_, i) => String(40 + i)));
  expect(await storedValues(service.url, bay2.ids[0])).toEqual(temps.map((_, i) => String(20 + i)));
  const s = gateway.stats();
  expect(s.devices.map((d) => [d.name, d.accepted, d.delivered, d.lost])).toEqual([
    ['bay-1', 100, 100, 0],
    ['bay-2', 50, 50, 0],
  ]);
  expect(s.sources.find((x) => x.source === 'mqtt:site/+/bay2/#')?.messagesIn).toBe(50);
  return { gateway, lines };
}

describe('MQTT in, embedded broker (aedes)', () => {
  it('stores every published reading with its resource, value and order', async () => {
    const { service, url, dir } = await world('aedes');
    const { gateway } = await runScenario(service, url, dir);
    const metrics = await (await fetch(gateway.metricsUrl as string)).text();
    expect(metrics).toContain(`feed_gateway_device_delivered_total{device="bay-1",public_key="${bay1.publicKey}"} 100`);
    expect(metrics).toContain('feed_gateway_mqtt_connected{broker="' + url + '"} 1');
  });

  it('counts and logs once each bad input, and the rest flows', async () => {
    const { service, url, dir } = await world('aedes');
    const lines: string[] = [];
    const gateway = await startGateway(config(service.url, url, dir, { subscribe: ['site/#'] }), { log: (l) => lines.push(l) });
    cleanups.push(() => gateway.stop());
    await waitFor('the gateway to connect', () => gateway.stats().mqtt?.connected === true);
    const field = await publisher(url);
    for (let i = 0; i < 3; i++) {
      await field.publishAsync('site/bay1/env', 'not json', { qos: 1 }); // does not parse
      await field.publishAsync('site/bay1/env', JSON.stringify({ other: 1 }), { qos: 1 }); // no such field
      await field.publishAsync('site/bay1/temperature', '999', { qos: 1 }); // outside -40..125
      await field.publishAsync('site/nowhere', '1', { qos: 1 }); // matches no resource
      await field.publishAsync('site/bay1/temperature', String(20 + i), { qos: 1 }); // good
    }
    await waitFor('the good readings stored', async () => (await storedValues(service.url, bay1.ids[0])).length >= 3);
    expect(await storedValues(service.url, bay1.ids[0])).toEqual(['20', '21', '22']);
    const s = gateway.stats();
    const env = s.sources.find((x) => x.source === 'mqtt:site/bay1/env');
    const temp = s.sources.find((x) => x.source === 'mqtt:site/bay1/temperature');
    expect(env?.parseErrors).toBe(6);
    expect(temp?.refused).toBe(3);
    expect(s.mqtt?.unmatched).toBe(3);
    // Each logged once, with its reason.
    expect(lines.filter((l) => l.includes('payload is not JSON'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('has no field "humidity"'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('"site/nowhere" matches no resource'))).toHaveLength(1);
    const refused = lines.filter((l) => l.startsWith('bay-1: topic "site/bay1/temperature"'));
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatch(/999/);
  });

  it('publishes a command at QoS 1, once', async () => {
    const { service, url, dir } = await world('aedes');
    const gateway = await startGateway(config(service.url, url, dir), { log: () => {} });
    cleanups.push(() => gateway.stop());
    const field = await publisher(url);
    const got: string[] = [];
    await field.subscribeAsync('site/bay1/vent/set', { qos: 1 });
    field.on('message', (_t, payload) => got.push(payload.toString()));
    await waitFor('bay 1 to run', () => gateway.stats().devices[0].state === 'running');
    await new Promise((r) => setTimeout(r, 500)); // the first poll learns the current feed, which is no command
    const res = await fetch(`${service.url}/_local/resources/${bay1.ids[2]}/feeds`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ input: 1 }) });
    expect(res.status).toBe(200);
    await waitFor('the command published', () => got.length >= 1);
    await new Promise((r) => setTimeout(r, 800));
    expect(got).toEqual(['1']);
  });
});

describe.skipIf(mosquittoPath() === null)(`MQTT in, Debian's mosquitto${mosquittoPath() === null ? ' (skipped: /usr/sbin/mosquitto is not installed: apt-get install -y mosquitto)' : ''}`, () => {
  it('stores every published reading with its resource, value and order', async () => {
    const { service, url, dir } = await world('mosquitto');
    await runScenario(service, url, dir);
  });

  it('loses nothing when the broker restarts under load', async () => {
    const { service, url, dir, mosquitto } = await world('mosquitto');
    const gateway = await startGateway(config(service.url, url, dir), { log: () => {} });
    cleanups.push(() => gateway.stop());
    await waitFor('the gateway to connect', () => gateway.stats().mqtt?.connected === true);
    const field = await connectAsync(url, { clientId: 'field-restart', protocolVersion: 4, clean: false, reconnectPeriod: 200 });
    cleanups.push(() => field.endAsync(true));
    const acked: string[] = [];
    let on = true;
    const load = (async () => {
      for (let i = 1; on; i++) {
        const v = String(15 + (i % 1000) / 100);
        await field.publishAsync('site/bay1/temperature', v, { qos: 1 });
        acked.push(v);
        if (i % 20 === 0) await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await waitFor('load flowing', () => acked.length > 300);
    // SIGTERM: mosquitto saves its sessions (persistence) and comes back on the same port.
    await mosquitto!.stop();
    await waitFor('the gateway sees the broker gone', () => gateway.stats().mqtt?.connected === false);
    await mosquitto!.run();
    await waitFor('reconnected', () => gateway.stats().mqtt?.connected === true, 20_000);
    await waitFor('load flowing again', () => acked.length > 1000, 20_000);
    on = false;
    await load;
    await waitFor('every acknowledged reading stored', async () => (await storedValues(service.url, bay1.ids[0])).length >= acked.length, 20_000);
    const stored = await storedValues(service.url, bay1.ids[0]);
    // Everything the broker acknowledged to the publisher, in order; a message whose PUBACK to the
    // publisher the restart cut is published again by it, so it may be stored twice, next to itself.
    const deduped = stored.filter((v, i) => i === 0 || v !== stored[i - 1]);
    expect(deduped).toEqual(acked.filter((v, i) => i === 0 || v !== acked[i - 1]));
    expect(gateway.stats().mqtt?.connects).toBe(2);
  }, 60_000);
});
