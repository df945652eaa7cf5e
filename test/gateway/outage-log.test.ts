// What the gateway's log says through an outage (issue 38): the demo's config (examples/gateway.json: three
// bays on MQTT and Modbus, each with a vent to command) against the demo's kind of field (an aedes broker,
// a Modbus device, field devices publishing), with the service down: its port refuses. Each endpoint that
// fails is logged when it starts failing and when it recovers, never once per try, though every one of
// them was tried again and again meanwhile (the recovery says how often). Then the broker and the Modbus
// device go away together and come back: the same for the gateway's own connections.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MqttClient } from 'mqtt';
import { connectAsync } from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';

import { parseGatewayConfig, startGateway } from '../../platforms/node/gateway';
import { encodeWords } from '../../platforms/node/gateway/registers';
import { startService } from '../../src/service';
import type { RunningService } from '../../src/service';
import { ROOT } from '../support/build';
import { AedesBroker, ModbusDevice, SEED, storedValues, tempDir, waitFor } from './support';

const OUTAGE_MS = 10_000;

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The demo's config, pointed at this test's service, broker, Modbus device and queue folder. */
function demoConfig(serviceUrl: string, brokerUrl: string, plcPort: number, queueDir: string) {
  const file = join(ROOT, 'examples', 'gateway.json');
  const json = JSON.parse(readFileSync(file, 'utf8'));
  json.service.url = serviceUrl;
  json.queue.dir = queueDir;
  json.mqtt.url = brokerUrl;
  json.modbus['greenhouse-plc'].port = plcPort;
  json.metrics = false;
  json.status = { everyS: 0 };
  const env = Object.fromEntries(SEED.devices.map((d, i) => [`BAY${i + 1}_TOKEN`, d.token]));
  return parseGatewayConfig(json, env, ROOT);
}

/** The demo's field: Bay 1 and Bay 2 publish every 250 ms, Bay 3's PLC registers change. */
function feed(field: MqttClient, plc: ModbusDevice): () => void {
  let n = 0;
  const timer = setInterval(() => {
    n++;
    field.publish('site/bay1/temperature', String(20 + (n % 10)), { qos: 1 });
    field.publish('site/bay1/env', JSON.stringify({ humidity: 50 + (n % 10) }), { qos: 1 });
    field.publish('site/bay2/north/temperature', String(18 + (n % 10)), { qos: 1 });
    field.publish('site/bay2/env', JSON.stringify({ data: { humidity: 40 + (n % 10) } }), { qos: 1 });
    [plc.holding[0], plc.holding[1]] = encodeWords(22 + (n % 10) / 10, 'float32', 'high-first');
    plc.input[2] = 600 + (n % 10);
  }, 250);
  return () => clearInterval(timer);
}

/** The lines that say an endpoint starts failing or recovered, by endpoint: `Bay 1: warn: command poll` → ['failing', 'recovered after 5 failed tries in 9 s']. */
function endpointStates(lines: string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of lines) {
    const m = /^(.*?): (failing|still failing|recovered)\b(.*)$/.exec(line);
    if (m === null) continue;
    const endpoint = m[1].replace(/: (warn|info): /, ': ');
    out.set(endpoint, [...(out.get(endpoint) ?? []), m[2] === 'recovered' ? 'recovered' + m[3].replace(/:.*$/, '') : m[2]]);
  }
  return out;
}

/** How many tries failed, from a "recovered after N failed tries in T s" state. */
const tries = (state: string | undefined): number => Number(/after (\d+) failed/.exec(state ?? '')?.[1] ?? 0);

describe('the gateway demo through an outage', () => {
  it('logs each failing endpoint once when it starts failing and once when it recovers, not once per try', async () => {
    // The service's port, then the service stopped: the port refuses.
    const first = await startService({ seed: SEED, dashboard: {} });
    const serviceUrl = first.url;
    const port = Number(new URL(serviceUrl).port);
    await first.close();
    const broker = await AedesBroker.start();
    cleanups.push(() => broker.close());
    const plc = await ModbusDevice.start();
    cleanups.push(() => plc.down());
    const q = tempDir('gw-outage-log-');
    cleanups.push(q.remove);
    const field = await connectAsync(broker.url, { clientId: 'demo-field-devices', protocolVersion: 4 });
    cleanups.push(() => field.endAsync(true));
    cleanups.push(feed(field, plc));

    const lines: string[] = [];
    const gateway = await startGateway(demoConfig(serviceUrl, broker.url, plc.port, q.dir), { log: (l) => lines.push(l) });
    cleanups.push(() => gateway.stop());
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));

    // The service down: for each device, its lookup, its command poll and its uplink said once that they fail.
    const down = lines.slice();
    const failing = [...endpointStates(down)];
    const names = ['Bay 1', 'Bay 2', 'Bay 3'];
    expect(failing.map(([endpoint]) => endpoint).sort()).toEqual(names.flatMap((n) => [`${n}: command poll`, `${n}: resource lookup`, `${n}: uplink`]).sort());
    for (const [, states] of failing) expect(states).toEqual(['failing']);
    // No other line speaks of the service: nothing is said per try.
    const aboutService = down.filter((l) => l.includes(`127.0.0.1:${port}`));
    expect(aboutService).toHaveLength(failing.length);
    expect(down.filter((l) => !aboutService.includes(l) && !/^(mqtt|modbus): (connected|subscribed)|starting without the resources' restrictions/.test(l))).toEqual([]);

    // The service back on its port: each endpoint says it recovered, after several tries.
    const service: RunningService = await startService({ seed: SEED, dashboard: {}, port });
    cleanups.push(() => service.close());
    await waitFor('every endpoint recovered', () => [...endpointStates(lines).values()].every((s) => s.at(-1)?.startsWith('recovered')), 60_000);
    const back = endpointStates(lines);
    for (const n of names) expect(tries(back.get(`${n}: command poll`)?.[1])).toBeGreaterThanOrEqual(3);
    for (const id of [201, 202, 211, 212, 221, 222]) await waitFor(`resource ${id} fed`, async () => (await storedValues(service.url, id)).length > 0);

    // The broker and the Modbus device away together, then back: each connection said once that it
    // fails, and once that it recovered; a register whose device is unreachable says nothing of its own.
    const before = lines.length;
    await broker.down();
    await plc.down();
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    const away = lines.slice(before);
    await broker.listen(broker.port);
    await plc.up();
    await waitFor('the broker and the Modbus device recovered', () => gateway.stats().mqtt?.connected === true && gateway.stats().modbus.every((m) => m.connected), 60_000);
    const field2 = [...endpointStates(lines.slice(before))];
    expect(field2.map(([endpoint]) => endpoint).sort()).toEqual([`modbus: greenhouse-plc at 127.0.0.1:${plc.port}`, `mqtt: ${broker.url}`]);
    for (const [endpoint, states] of field2) {
      expect(states, endpoint).toHaveLength(2);
      expect(states[0]).toBe('failing');
      expect(tries(states[1]), endpoint).toBeGreaterThanOrEqual(3);
    }
    expect(away.filter((l) => !/: failing: /.test(l))).toEqual([]);
  }, 120_000);
});
