// MQTT over TLS with a login, against Debian's mosquitto: the broker's certificate is checked against the
// configured CA file; a refused login is retried with backoff while the rest of the gateway delivers
// (here a Modbus device), and a reload with the right password connects and delivers.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectAsync } from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';

import { parseGatewayConfig, startGateway } from '../../platforms/node/gateway';
import { killAll } from '../support/children';
import { BAYS, ModbusDevice, Mosquitto, mosquittoPath, startLocalService, storedValues, tempDir, waitFor } from './support';

const mosquitto = mosquittoPath();
const tools = (() => {
  try {
    execFileSync('openssl', ['version']);
    execFileSync('mosquitto_passwd', ['-h'], { stdio: 'ignore' });
    return true;
  } catch (e) {
    // mosquitto_passwd -h exits 1 after printing its usage: it is there.
    return (e as { status?: number }).status === 1;
  }
})();
const skip = mosquitto === null || !tools;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  killAll();
});

/** A CA, and a certificate for 127.0.0.1 signed by it. */
function certificates(dir: string): void {
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=test-ca');
  run('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  run('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'ext.cnf');
}

describe.skipIf(skip)(`MQTT over TLS with a login${skip ? ' (skipped: needs /usr/sbin/mosquitto, mosquitto_passwd and openssl: apt-get install -y mosquitto openssl)' : ''}`, () => {
  it('checks the broker against the CA file, retries a refused login while the rest delivers, and connects once reloaded with the right password', async () => {
    const [bay1, bay3] = [BAYS[0], BAYS[2]];
    const d = tempDir('gw-tls-');
    cleanups.push(d.remove);
    certificates(d.dir);
    execFileSync('mosquitto_passwd', ['-c', '-b', join(d.dir, 'passwords'), 'gateway', 'right-password']);
    execFileSync('mosquitto_passwd', ['-b', join(d.dir, 'passwords'), 'field', 'field-password']);
    const broker = await Mosquitto.start(mosquitto as string, d.dir, [
      `cafile ${join(d.dir, 'ca.pem')}`,
      `certfile ${join(d.dir, 'server.pem')}`,
      `keyfile ${join(d.dir, 'server.key')}`,
      `password_file ${join(d.dir, 'passwords')}`,
    ]);
    // Mosquitto.start wrote "allow_anonymous true": a login is still checked when one is given.
    cleanups.push(() => broker.stop());
    const service = await startLocalService();
    cleanups.push(() => service.close());
    const plc = await ModbusDevice.start();
    cleanups.push(() => plc.down());
    plc.holding[0] = 7;
    const url = `mqtts://127.0.0.1:${broker.port}`;
    const configFor = (password: string) =>
      parseGatewayConfig(
        {
          service: { url: service.url },
          queue: { dir: join(d.dir, 'queue') },
          mqtt: { url, clientId: 'tls-gateway', username: 'gateway', passwordEnv: 'MQTT_PASSWORD', caFile: join(d.dir, 'ca.pem') },
          modbus: { plc: { host: '127.0.0.1', port: plc.port } },
          metrics: false,
          status: { everyS: 0 },
          devices: [
            { name: 'bay-1', publicKey: bay1.publicKey, tokenEnv: 'T1', resources: [{ id: bay1.ids[0], mqtt: { topic: 'bay1/t' } }] },
            { name: 'bay-3', publicKey: bay3.publicKey, tokenEnv: 'T3', resources: [{ id: bay3.ids[0], modbus: { source: 'plc', kind: 'holding-register', address: 0, everyMs: 100 } }] },
          ],
        },
        { T1: bay1.token, T3: bay3.token, MQTT_PASSWORD: password },
        '/',
      );
    const lines: string[] = [];
    const gateway = await startGateway(configFor('wrong-password'), { log: (l) => lines.push(l) });
    cleanups.push(() => gateway.stop());
    await waitFor('the login refused', () => /Not authorized|Bad username or password/.test(gateway.stats().mqtt?.lastError ?? '')).catch((e) => {
      throw new Error(`${(e as Error).message}: ${JSON.stringify(gateway.stats().mqtt)}\n${lines.join('\n')}\n${broker.log}`);
    });
    // Modbus delivers meanwhile.
    await waitFor('bay 3 delivered', async () => (await storedValues(service.url, bay3.ids[0])).length >= 3);
    expect(gateway.stats().mqtt?.connects).toBe(0);
    expect(lines.join('\n')).not.toContain('wrong-password');

    await gateway.reload(configFor('right-password'));
    await waitFor('connected over TLS', () => gateway.stats().mqtt?.connected === true, 20_000);
    const field = await connectAsync(url, { clientId: 'field', protocolVersion: 4, username: 'field', password: 'field-password', ca: [readFileSync(join(d.dir, 'ca.pem'))] });
    cleanups.push(() => field.endAsync());
    for (const v of ['1', '2', '3']) await field.publishAsync('bay1/t', v, { qos: 1 });
    await waitFor('bay 1 stored', async () => (await storedValues(service.url, bay1.ids[0])).length === 3);
    expect(await storedValues(service.url, bay1.ids[0])).toEqual(['1', '2', '3']);
  }, 60_000);
});
