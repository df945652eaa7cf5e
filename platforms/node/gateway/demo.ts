// `feed-agent gateway --demo`: the whole picture in one process, on 127.0.0.1 and fixed ports so that
// examples/gateway.json runs as written against it: an embedded MQTT broker (aedes), field devices
// publishing to it, a simulated Modbus TCP device (modbus-serial's ServerTCP), the local service seeded
// with three devices (examples/gateway-seed.json), and, unless `fieldOnly`, the gateway serving them.
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { dirname, join } from 'node:path';

import { parseSeed, startService } from '../../../src/service';
import type { RunningService } from '../../../src/service';
import { parseGatewayConfig } from './config';
import { startGateway } from './gateway';
import type { Gateway } from './gateway';
import { MissingPeerError } from './missing-peer';
import { encodeWords } from './registers';

export const DEMO_PORTS = Object.freeze({ service: 8090, broker: 1884, modbus: 5020 });

export interface Demo {
  gateway: Gateway | null;
  close(): Promise<void>;
}

/** The repository's or the installed package's examples/ folder. */
function examplesDir(): string {
  for (let dir = import.meta.dirname; dirname(dir) !== dir; dir = dirname(dir)) {
    if (existsSync(join(dir, 'examples', 'gateway.json'))) return join(dir, 'examples');
  }
  throw new Error('examples/gateway.json not found beside the program');
}

export async function runDemo(options: { fieldOnly: boolean }): Promise<Demo> {
  const aedes = await peer<typeof import('aedes')>('aedes');
  const mqtt = await peer<typeof import('mqtt')>('mqtt');
  const modbus = await peer<typeof import('modbus-serial')>('modbus-serial');
  const examples = examplesDir();
  const seed = parseSeed(readFileSync(join(examples, 'gateway-seed.json'), 'utf8'));
  const closers: (() => Promise<unknown> | void)[] = [];
  const close = async (): Promise<void> => {
    for (const c of closers.splice(0).reverse()) await c();
  };
  try {
    const service: RunningService = await startService({ seed, port: DEMO_PORTS.service, dashboard: {} });
    closers.push(() => service.close());

    const broker = await aedes.Aedes.createBroker();
    const server: Server = createServer((socket) => broker.handle(socket));
    await listen(server, DEMO_PORTS.broker, 'the MQTT broker');
    closers.push(() => new Promise<void>((resolve) => broker.close(() => server.close(() => resolve()))));

    // Every field value is a slow wave in time since the start.
    const started = Date.now();
    const wave = (base: number, amp: number, period: number): number => {
      const t = (Date.now() - started) / 1000;
      return Math.round((base + amp * Math.sin((2 * Math.PI * t) / period)) * 10) / 10;
    };

    // Bay 3's PLC: temperature (float32, holding registers 0-1), humidity ×10 (input register 2), vent (coil 0).
    // Its registers hold readings before it listens, as a real PLC's do: the gateway's first poll reads
    // the air, not zeros.
    const holding = new Array<number>(8).fill(0);
    const input = new Array<number>(8).fill(0);
    const coils = new Array<boolean>(8).fill(false);
    const measure = (): void => {
      [holding[0], holding[1]] = encodeWords(wave(24, 4, 150), 'float32', 'high-first');
      input[2] = Math.round(wave(65, 12, 240) * 10);
    };
    measure();
    const plc = new modbus.ServerTCP(
      {
        getHoldingRegister: (addr: number) => holding[addr] ?? 0,
        getInputRegister: (addr: number) => input[addr] ?? 0,
        getCoil: (addr: number) => coils[addr] ?? false,
        setCoil: (addr: number, value: boolean) => {
          if (coils[addr] !== value) console.log(`Bay 3 PLC: vent ${value ? 'opens' : 'closes'} (coil ${addr} written)`);
          coils[addr] = value;
        },
        setRegister: (addr: number, value: number) => {
          holding[addr] = value;
        },
      },
      { host: '127.0.0.1', port: DEMO_PORTS.modbus, unitID: 1 },
    );
    await new Promise<void>((resolve, reject) => {
      plc.on('initialized', () => resolve());
      (plc as unknown as NodeJS.EventEmitter).on('serverError', (e: Error) => reject(new Error(`the Modbus device cannot listen on 127.0.0.1:${DEMO_PORTS.modbus}: ${e.message}`)));
    });
    closers.push(() => new Promise<void>((resolve) => plc.close(() => resolve())));

    const field = await mqtt.connectAsync(`mqtt://127.0.0.1:${DEMO_PORTS.broker}`, { clientId: 'demo-field-devices', protocolVersion: 4 });
    closers.push(() => field.endAsync(true));
    await field.subscribeAsync(['site/bay1/vent/set', 'site/bay2/vent/set'], { qos: 1 });
    field.on('message', (topic, payload) => console.log(`${topic.includes('bay1') ? 'Bay 1' : 'Bay 2'} field device: vent ${payload.toString() === '1' ? 'opens' : 'closes'} (${topic})`));
    const tick = setInterval(() => {
      field.publish('site/bay1/temperature', String(wave(22, 3, 120)), { qos: 1 });
      field.publish('site/bay1/env', JSON.stringify({ humidity: Math.round(wave(60, 10, 300)) }), { qos: 1 });
      field.publish('site/bay2/north/temperature', String(wave(19, 2, 90)), { qos: 1 });
      field.publish('site/bay2/env', JSON.stringify({ data: { humidity: Math.round(wave(55, 8, 200)) } }), { qos: 1 });
      measure();
    }, 1000);
    closers.push(() => clearInterval(tick));

    console.log(`feed-agent gateway demo, all on 127.0.0.1:`);
    console.log(`  service    ${service.url} (three devices, examples/gateway-seed.json)`);
    console.log(`  dashboard  ${service.dashboard?.url ?? service.url + '/'}  (readings arrive; command the vents)`);
    console.log(`  broker     mqtt://127.0.0.1:${DEMO_PORTS.broker} (embedded aedes; Bay 1 and Bay 2 publish to site/…)`);
    console.log(`  modbus     127.0.0.1:${DEMO_PORTS.modbus} unit 1 (Bay 3's PLC: float32 at holding 0, humidity ×10 at input 2, vent coil 0)`);
    let gateway: Gateway | null = null;
    const file = join(examples, 'gateway.json');
    if (options.fieldOnly) {
      console.log(`  gateway    not started (--field-only): run in another terminal`);
      console.log(`             ${seed.devices.map((d, i) => `BAY${i + 1}_TOKEN=${d.token}`).join(' ')} npx feed-agent gateway --config ${file}`);
    } else {
      const env = { ...process.env };
      seed.devices.forEach((d, i) => (env[`BAY${i + 1}_TOKEN`] = d.token));
      gateway = await startGateway(parseGatewayConfig(JSON.parse(readFileSync(file, 'utf8')), env, dirname(file)));
      closers.push(() => (gateway as Gateway).stop());
      console.log(`  gateway    ${file}, metrics at ${gateway.metricsUrl}`);
    }
    console.log('Ctrl-C stops.');
    return { gateway, close };
  } catch (e) {
    await close();
    throw e;
  }
}

async function peer<T>(name: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND') throw new MissingPeerError([name]);
    throw e;
  }
}

function listen(server: Server, port: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (e) => reject(new Error(`${what} cannot listen on 127.0.0.1:${port}: ${e.message}`)));
    server.listen(port, '127.0.0.1', () => resolve());
  });
}
