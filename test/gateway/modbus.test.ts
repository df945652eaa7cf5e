// Modbus TCP in, end to end: registers of a Modbus device in this process (modbus-serial's ServerTCP),
// polled by the gateway and stored by the real local service with the right resource, value and order;
// the device is slow sometimes, goes away and comes back, and a second device is never held up by it.
// Commands go out to a coil and to a register.
import { afterEach, describe, expect, it } from 'vitest';

import { parseGatewayConfig, startGateway } from '../../platforms/node/gateway';
import { encodeWords } from '../../platforms/node/gateway/registers';
import { BAYS, ModbusDevice, startLocalService, storedValues, tempDir, waitFor } from './support';

const [bay1, bay2, bay3] = BAYS;
const ENV = { T1: bay1.token, T2: bay2.token, T3: bay3.token };

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Consecutive repeats folded: every poll stores a reading, a changed register a new value. */
const changes = (values: string[]): string[] => values.filter((v, i) => i === 0 || v !== values[i - 1]);

function setFloat(d: ModbusDevice, at: number, v: number): void {
  [d.holding[at], d.holding[at + 1]] = encodeWords(v, 'float32', 'high-first');
}

describe('Modbus TCP in', () => {
  it('stores polled registers with their resource, value and order, through a slow and a vanishing device', async () => {
    const service = await startLocalService();
    cleanups.push(() => service.close());
    const plc = await ModbusDevice.start();
    cleanups.push(() => plc.down());
    const other = await ModbusDevice.start();
    cleanups.push(() => other.down());
    const q = tempDir('gw-modbus-');
    cleanups.push(q.remove);
    const config = parseGatewayConfig(
      {
        service: { url: service.url },
        queue: { dir: q.dir },
        modbus: { plc: { host: '127.0.0.1', port: plc.port, timeoutMs: 300 }, other: { host: '127.0.0.1', port: other.port } },
        metrics: false,
        status: { everyS: 0 },
        devices: [
          {
            name: 'bay-3',
            publicKey: bay3.publicKey,
            tokenEnv: 'T3',
            resources: [
              { id: bay3.ids[0], modbus: { source: 'plc', kind: 'holding-register', address: 0, type: 'float32', everyMs: 50 } },
              { id: bay3.ids[1], modbus: { source: 'plc', kind: 'input-register', address: 4, type: 'int32', wordOrder: 'low-first', scale: 0.01, offset: 10, everyMs: 50 } },
              { id: bay3.ids[2], command: { modbus: { source: 'plc', kind: 'coil', address: 7 }, everyMs: 200 } },
            ],
          },
          {
            name: 'bay-2',
            publicKey: bay2.publicKey,
            tokenEnv: 'T2',
            resources: [
              { id: bay2.ids[0], modbus: { source: 'other', kind: 'holding-register', address: 1, type: 'int16', everyMs: 50 } },
              { id: bay2.ids[2], command: { modbus: { source: 'other', kind: 'holding-register', address: 9, type: 'uint16', scale: 0.1 }, everyMs: 200 } },
            ],
          },
        ],
      },
      ENV,
      '/',
    );
    const temps = [21.5, 22.25, -3.75, 40];
    const hums = [55.5, 61.25, 70];
    const counts = [1, -2, 3];
    const stored = (id: number) => storedValues(service.url, id);
    const set = (i: number): void => {
      if (i < temps.length) setFloat(plc, 0, temps[i]);
      if (i < hums.length) [plc.input[4], plc.input[5]] = encodeWords(Math.round((hums[i] - 10) / 0.01), 'int32', 'low-first');
      if (i < counts.length) other.holding[1] = counts[i] & 0xffff;
    };
    set(0);
    const lines: string[] = [];
    const gateway = await startGateway(config, { log: (l) => lines.push(l) });
    cleanups.push(() => gateway.stop());
    const step = async (i: number): Promise<void> => {
      set(i);
      await waitFor(`step ${i} stored`, async () => {
        const t = await stored(bay3.ids[0]);
        const h = await stored(bay3.ids[1]);
        const c = await stored(bay2.ids[0]);
        return t.at(-1) === String(temps[Math.min(i, temps.length - 1)]) && h.at(-1) === String(hums[Math.min(i, hums.length - 1)]) && c.at(-1) === String(counts[Math.min(i, counts.length - 1)]);
      });
    };
    await step(0);
    await step(1);

    // Slow: answers after the gateway's timeout. Reads fail, are counted, logged once, retried with backoff.
    plc.slowMs = 600;
    await waitFor('slow reads counted', () => gateway.stats().sources.filter((s) => s.source.startsWith('modbus:plc')).every((s) => s.readErrors > 0));
    plc.slowMs = 0;
    await step(2);

    // Gone, and back on the same port: the other device is not held up meanwhile.
    await plc.down();
    const before = (await stored(bay2.ids[0])).length;
    await waitFor('the other device still polled while the first is down', async () => (await stored(bay2.ids[0])).length > before + 10);
    expect(gateway.stats().modbus.find((m) => m.name === 'plc')?.connected).toBe(false);
    await plc.up();
    await step(3);

    expect(changes(await stored(bay3.ids[0]))).toEqual(temps.map(String));
    expect(changes(await stored(bay3.ids[1]))).toEqual(hums.map(String));
    expect(changes(await stored(bay2.ids[0]))).toEqual(counts.map(String));
    // Each endpoint said when it started failing and when it recovered, not once per failed poll: the
    // register's reads through the slow spell, the device's connection through its absence (the reads that
    // found no connection are the device's failure, not the register's).
    const states = (prefix: string) => lines.filter((l) => l.startsWith(prefix)).map((l) => l.slice(prefix.length).replace(/^(failing|recovered).*/s, '$1'));
    expect(states(`bay-3: resource ${bay3.ids[0]}: reads of modbus plc holding-register 0: `)).toEqual(['failing', 'recovered']);
    expect(lines).toContain(`bay-3: resource ${bay3.ids[0]}: reads of modbus plc holding-register 0: failing: Timed out`);
    expect(states(`modbus: plc at 127.0.0.1:${plc.port}: `)).toEqual(['failing', 'recovered']);
    expect(gateway.stats().sources.find((s) => s.source === 'modbus:plc/holding-register/0')?.readErrors).toBeGreaterThanOrEqual(2);

    // Commands out: a coil and a scaled register, each written once.
    await fetch(`${service.url}/_local/resources/${bay3.ids[2]}/feeds`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"input": 1}' });
    await fetch(`${service.url}/_local/resources/${bay2.ids[2]}/feeds`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"input": 1}' });
    await waitFor('the coil written', () => plc.coils[7]);
    await waitFor('the register written', () => other.holding[9] === 10);
    expect(lines.filter((l) => /command (1|true) sent/.test(l)).length).toBe(2);
  }, 60_000);
});
