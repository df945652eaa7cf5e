// The README's walk-through, as written: `feed-agent gateway --demo --field-only` (the embedded broker, the
// simulated PLC, the field publishers and the local service on their fixed loopback ports) and, beside it,
// `feed-agent gateway --config examples/gateway.json` with the three tokens in the environment. Every
// bay's readings reach the service, and /metrics answers. Skipped where one of the demo's ports is taken.
import { join } from 'node:path';
import { createServer } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { DEMO_PORTS } from '../../src/gateway/demo';
import { buildInto, ROOT, workDir } from '../support/build';
import { killAll } from '../support/children';
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
    cli = buildInto(work.dir);
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
});
