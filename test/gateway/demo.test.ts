// The README's walk-through, as written: `feed-agent gateway --demo --field-only` (the embedded broker, the
// simulated PLC, the field publishers and the local service on their fixed loopback ports) and, beside it,
// `feed-agent gateway --config examples/gateway.json` with the three tokens in the environment. Every
// bay's readings reach the service, and /metrics answers. Then `npm run gateway:demo` as a user runs it,
// and Bay 3's PLC. Skipped where one of the demo's ports is taken.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import ModbusRTU from 'modbus-serial';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';

import { DEMO_PORTS } from '../../platforms/node/gateway/demo';
import { decodeWords } from '../../platforms/node/gateway/registers';
import { ROOT, workDir } from '../support/build';
import { killAll, track } from '../support/children';
import { GatewayChild, SEED, storedValues, waitFor } from './support';

const METRICS_PORT = 9464;

async function free(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
const busy = (await Promise.all([...Object.values(DEMO_PORTS), METRICS_PORT].map(async (p) => ((await free(p)) ? null : p)))).filter((p) => p !== null);

describe.skipIf(busy.length > 0)(`the gateway demo${busy.length > 0 ? ` (skipped: port ${busy.join(', ')} in use on 127.0.0.1)` : ''}`, () => {
  const work = workDir('gw-demo-');
  let cli = '';
  beforeAll(() => {
    cli = join(inject('built'), 'cli.js');
  });
  afterEach(killAll);
  afterAll(work.remove);

  it('runs examples/gateway.json as written against the demo', async () => {
    const field = new GatewayChild(cli, ['--demo', '--field-only'], {});
    await field.waitForLine(/Ctrl-C stops/);
    const env = Object.fromEntries(SEED.devices.map((d, i) => [`BAY${i + 1}_TOKEN`, d.token]));
    const gateway = new GatewayChild(cli, ['--config', join(ROOT, 'examples', 'gateway.json')], env);
    await gateway.waitForLine(/metrics at http:\/\/127\.0\.0\.1:9464\/metrics/);
    const url = `http://127.0.0.1:${DEMO_PORTS.service}`;
    for (const id of [201, 202, 211, 212, 221, 222]) {
      await waitFor(`resource ${id} fed`, async () => (await storedValues(url, id)).length > 0, 15_000);
    }
    const metrics = await (await fetch(`http://127.0.0.1:${METRICS_PORT}/metrics`)).text();
    expect(metrics).toMatch(/feed_gateway_mqtt_connected\{broker="mqtt:\/\/127\.0\.0\.1:1884"\} 1/);
    expect(metrics).toMatch(/feed_gateway_modbus_connected\{modbus="greenhouse-plc"\} 1/);
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toBe(0);
    field.child.kill('SIGTERM');
    expect(await field.exited).toBe(0);
  }, 60_000);

  it('`npm run gateway:demo` and one Ctrl-C drain the queues and exit 0', async () => {
    // The repository's script, run by npm in a project whose dist/ is this build; Ctrl-C as a terminal
    // sends it, to the whole process group: npm and the demo, which npm also forwards it to.
    const app = join(work.dir, 'app');
    mkdirSync(app);
    symlinkSync(inject('built'), join(app, 'dist'));
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, scripts: { 'gateway:demo': scripts['gateway:demo'] } }));
    const npm = track(spawn('npm', ['run', 'gateway:demo', '--silent'], { cwd: app, detached: true, stdio: ['ignore', 'pipe', 'pipe'] }));
    let out = '';
    npm.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    npm.stderr!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const exited = new Promise<number | null>((resolve) => npm.on('close', (code) => resolve(code)));
    try {
      await waitFor(`the demo to start:\n${out}`, () => out.includes('Ctrl-C stops.'), 30_000);
      await waitFor('resource 221 fed', async () => (await storedValues(`http://127.0.0.1:${DEMO_PORTS.service}`, 221)).length > 0, 15_000);
      process.kill(-npm.pid!, 'SIGINT');
      // npm's copy can come later than the terminal's, on a busy machine: here a tenth of a second, by a
      // second SIGINT to npm alone, which forwards it (two copies at once could merge into one signal).
      await new Promise((resolve) => setTimeout(resolve, 100));
      try {
        process.kill(npm.pid!, 'SIGINT');
      } catch {
        // ESRCH: npm is gone already, with the status its script ended with.
      }
      expect(await exited, out).toBe(0);
      expect(out).toContain('feed-agent gateway: SIGINT: stopping, draining the queues');
      expect(out).not.toContain('again: quitting');
    } finally {
      // Its group, should anything be left of it; gone when all went well.
      try {
        process.kill(-npm.pid!, 'SIGKILL');
      } catch {
        // ESRCH: nothing left.
      }
    }
  }, 60_000);

  it("Bay 3's PLC holds real readings from the moment it listens: the first stored are not zeros", async () => {
    const demo = new GatewayChild(cli, ['--demo'], {});
    await demo.waitForLine(/modbus +127\.0\.0\.1:5020/);
    // Read at once, within the demo's first second, before it ever updated them.
    const plc = new ModbusRTU();
    await plc.connectTCP('127.0.0.1', { port: DEMO_PORTS.modbus });
    plc.setID(1);
    const temperature = decodeWords((await plc.readHoldingRegisters(0, 2)).data, 'float32', 'high-first');
    const humidity = (await plc.readInputRegisters(2, 1)).data[0] / 10;
    await new Promise<void>((resolve) => plc.close(() => resolve()));
    // The demo's waves: temperature 24 ± 4 °C, humidity 65 ± 12 %.
    expect(temperature).toBeGreaterThanOrEqual(20);
    expect(temperature).toBeLessThanOrEqual(28);
    expect(humidity).toBeGreaterThanOrEqual(53);
    expect(humidity).toBeLessThanOrEqual(77);
    await demo.waitForLine(/Ctrl-C stops/);
    const url = `http://127.0.0.1:${DEMO_PORTS.service}`;
    for (const [id, low, high] of [[221, 20, 28], [222, 53, 77]]) {
      await waitFor(`resource ${id} fed`, async () => (await storedValues(url, id)).length > 0, 15_000);
      const first = Number((await storedValues(url, id))[0]);
      expect(first, `resource ${id}'s first stored reading`).toBeGreaterThanOrEqual(low);
      expect(first, `resource ${id}'s first stored reading`).toBeLessThanOrEqual(high);
    }
    demo.child.kill('SIGTERM');
    expect(await demo.exited).toBe(0);
  }, 60_000);
});
