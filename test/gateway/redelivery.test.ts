// A message the broker hands over again (DUP) after its PUBACK was lost is not stored twice. Between the
// gateway and Debian's mosquitto runs a TCP proxy that, once asked, swallows the gateway's next PUBACK
// and cuts the connection: mosquitto then redelivers that message with the DUP flag on the gateway's
// reconnect. The gateway had written it to its durable queue, noted it, and recognises it.
import { createConnection, createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { connectAsync } from 'mqtt';
import mqttPacket from 'mqtt-packet';
import { afterEach, describe, expect, it } from 'vitest';

import { parseGatewayConfig, startGateway } from '../../platforms/node/gateway';
import { killAll } from '../support/children';
import { BAYS, Mosquitto, mosquittoPath, startLocalService, storedValues, tempDir, waitFor } from './support';

const mosquitto = mosquittoPath();

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  killAll();
});

/** Forwards MQTT both ways; `losePuback()` drops the client's next PUBACK and cuts the connection. */
class PubackLosingProxy {
  private server: Server | null = null;
  private losing = false;
  private readonly sockets = new Set<Socket>();
  redelivered: { messageId?: number; dup: boolean }[] = [];
  port = 0;

  async start(brokerPort: number): Promise<void> {
    this.server = createServer((client) => {
      const broker = createConnection(brokerPort, '127.0.0.1');
      for (const s of [client, broker]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {});
      }
      const up = mqttPacket.parser({ protocolVersion: 4 });
      up.on('packet', (packet) => {
        if (packet.cmd === 'puback' && this.losing) {
          this.losing = false;
          client.destroy();
          broker.destroy();
          return;
        }
        broker.write(mqttPacket.generate(packet, { protocolVersion: 4 }));
      });
      const down = mqttPacket.parser({ protocolVersion: 4 });
      down.on('packet', (packet) => {
        if (packet.cmd === 'publish' && packet.dup) this.redelivered.push({ messageId: packet.messageId, dup: packet.dup });
      });
      client.on('data', (chunk) => up.parse(chunk));
      broker.on('data', (chunk) => {
        down.parse(chunk);
        client.write(chunk);
      });
      client.on('close', () => broker.destroy());
      broker.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => (this.server as Server).listen(0, '127.0.0.1', resolve));
    this.port = ((this.server as Server).address() as AddressInfo).port;
  }

  losePuback(): void {
    this.losing = true;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

describe.skipIf(mosquitto === null)(`redelivery${mosquitto === null ? ' (skipped: /usr/sbin/mosquitto is not installed)' : ''}`, () => {
  it('recognises a message handed over again after a lost PUBACK, and stores it once', async () => {
    const [bay1] = BAYS;
    const d = tempDir('gw-redeliver-');
    cleanups.push(d.remove);
    const broker = await Mosquitto.start(mosquitto as string, d.dir);
    cleanups.push(() => broker.stop());
    const proxy = new PubackLosingProxy();
    await proxy.start(broker.port);
    cleanups.push(() => proxy.close());
    const service = await startLocalService();
    cleanups.push(() => service.close());
    const config = parseGatewayConfig(
      {
        service: { url: service.url },
        queue: { dir: d.dir },
        mqtt: { url: `mqtt://127.0.0.1:${proxy.port}`, clientId: 'redelivery' },
        metrics: false,
        status: { everyS: 0 },
        devices: [{ name: 'bay-1', publicKey: bay1.publicKey, tokenEnv: 'T1', resources: [{ id: bay1.ids[0], mqtt: { topic: 't' } }] }],
      },
      { T1: bay1.token },
      '/',
    );
    const gateway = await startGateway(config, { log: () => {} });
    cleanups.push(() => gateway.stop());
    await waitFor('connected', () => gateway.stats().mqtt?.connected === true);
    await waitFor('running', () => gateway.stats().devices[0].state === 'running');
    const field = await connectAsync(broker.url, { clientId: 'field', protocolVersion: 4 });
    cleanups.push(() => field.endAsync());
    await field.publishAsync('t', '1', { qos: 1 });
    proxy.losePuback();
    await field.publishAsync('t', '2', { qos: 1 });
    await waitFor('reconnected', () => gateway.stats().mqtt?.connects === 2, 10_000);
    // Mosquitto hands over again what it holds unacknowledged: message 2, and 1 too when its PUBACK was
    // still on the way as the connection was cut.
    await waitFor('the redelivery seen', () => proxy.redelivered.length >= 1, 10_000);
    await field.publishAsync('t', '3', { qos: 1 });
    await waitFor('3 stored', async () => (await storedValues(service.url, bay1.ids[0])).includes('3'));
    expect(await storedValues(service.url, bay1.ids[0])).toEqual(['1', '2', '3']);
    expect(gateway.stats().mqtt?.duplicatesSkipped).toBe(proxy.redelivered.length);
  }, 30_000);
});
