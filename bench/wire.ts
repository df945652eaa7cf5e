// Bytes on the wire per delivered sample: the agent's operation-4 batches of 1, 10, 100 (the default) and
// 1,000 beside one operation-3 request per sample, the way the platform's own ESP8266 SDK sends
// readings. Both go through the Node host to the local service via the counting proxy, which counts what
// the socket carries both ways: request lines, headers, bodies. Then what a request costs where each is a
// new TCP and TLS connection, as with the firmware's classic Request (http=classic; its default host keeps
// one connection open, bench/firmware.ts) (bench/tls-connection.ts), and how many of those batching saves
// in an hour of the demo device at the agent's default settings (bench/device-run.ts).
import { createAgent } from '../src/core/agent';
import { UPLINK_DEFAULTS } from '../src/core/config';
import { createNodeHost } from '../platforms/node/host/host';
import { CountingProxy } from './counting-proxy';
import { demoClient, demoDevice, NUMERIC, VALUES } from './demo';
import { agentRun } from './device-run';
import { format, medianOf, round } from './measure';
import type { BenchRow, BenchSection } from './section';
import { serve } from './serve';
import { tlsConnectionCost } from './tls-connection';

const BATCHES = [1, 10, 100, 1000];
const RUNS = 3;
const HOUR_MS = 3_600_000;

interface Cost {
  bytesPerSample: number;
  requestsPerSample: number;
}

/** Enough samples for one full batch, and 100 at least, so that a figure per sample comes from many elements. */
function samplesFor(batch: number): number {
  return Math.max(100, batch);
}

/** What delivering samples through the agent in batches of `batch` costs on the wire. */
async function agentCost(proxy: CountingProxy, batch: number): Promise<Cost> {
  const resources = NUMERIC;
  const agent = createAgent(createNodeHost(), {
    ...demoDevice(proxy.url),
    resources,
    // Only flush() sends: every request carries a full batch.
    uplink: { batch, queue: Math.max(UPLINK_DEFAULTS.queue, batch), flushMs: HOUR_MS, maxLatencyMs: HOUR_MS, startJitterMs: 0 },
  });
  await agent.start();
  try {
    const n = samplesFor(batch);
    proxy.reset();
    const requests = agent.stats().requests;
    for (let i = 0; i < n; i++) agent.record(resources[i % resources.length], VALUES[resources[i % resources.length]] as number);
    if (!(await agent.flush()) || agent.stats().sent !== n) throw new Error('the agent did not deliver its ' + n + ' samples');
    return { bytesPerSample: proxy.bytes / n, requestsPerSample: (agent.stats().requests - requests) / n };
  } finally {
    await agent.stop({ flush: false });
  }
}

/** The baseline: one operation-3 request per sample, through the same host. */
async function perSampleCost(proxy: CountingProxy): Promise<Cost> {
  const client = demoClient(proxy.url);
  const n = samplesFor(1);
  proxy.reset();
  for (let i = 0; i < n; i++) await client.createFeed(NUMERIC[i % NUMERIC.length], VALUES[NUMERIC[i % NUMERIC.length]]);
  return { bytesPerSample: proxy.bytes / n, requestsPerSample: 1 };
}

export async function benchWire(): Promise<BenchSection> {
  const service = await serve();
  const proxy = await CountingProxy.start(Number(new URL(service.url).port));
  const figures: Record<string, number> = {};
  const rows: BenchRow[] = [];
  try {
    const baseline = round(await medianOf(RUNS, async () => (await perSampleCost(proxy)).bytesPerSample), 1);
    for (const batch of BATCHES) {
      const bytes = round(await medianOf(RUNS, async () => (await agentCost(proxy, batch)).bytesPerSample), 1);
      figures['wire.bytesPerSampleBatch' + batch] = bytes;
      const name = `batches of ${format(batch)}${batch === UPLINK_DEFAULTS.batch ? ' (default)' : ''}`;
      rows.push({ label: `${name}: ${round(1 / batch)} request${batch === 1 ? '' : 's'} per sample`, value: bytes, baseline, unit: 'bytes/sample' });
    }
    const batched = figures['wire.bytesPerSampleBatch' + UPLINK_DEFAULTS.batch];
    Object.assign(figures, {
      'wire.bytesPerSample': batched,
      'wire.baselineBytesPerSample': baseline,
      'wire.requestsPerSample': 1 / UPLINK_DEFAULTS.batch,
      'wire.baselineRequestsPerSample': 1,
    });

    // With the classic Request every request is a TCP and TLS connection of its own.
    const tls = await tlsConnectionCost();
    const connection = tls.handshake + tls.close;
    const device = round(batched + connection / UPLINK_DEFAULTS.batch, 1);
    const baselineDevice = baseline + connection;
    // An hour of the demo device at the default settings: how many connections that is.
    const hour = await agentRun(service.url, {}, HOUR_MS, 1);
    const saved = hour.samples - hour.requests;
    Object.assign(figures, {
      'wire.tlsHandshakeBytes': tls.handshake,
      'wire.tlsConnectionBytes': connection,
      'wire.deviceBytesPerSample': device,
      'wire.baselineDeviceBytesPerSample': baselineDevice,
      'wire.requestsPerHour': hour.requests,
      'wire.baselineRequestsPerHour': hour.samples,
      'wire.handshakesSavedPerHour': saved,
    });
    rows.push(
      { label: 'one TLS 1.2 connection: handshake (ECDHE, 2-certificate RSA chain) and close', value: connection, unit: 'bytes' },
      { label: 'with a TLS connection per request (classic Request), batches of 100', value: device, baseline: baselineDevice, unit: 'bytes/sample' },
      { label: `requests = TLS handshakes per hour with the classic Request, demo device at the defaults (${format(hour.samples)} readings)`, value: hour.requests, baseline: hour.samples, unit: 'requests' },
      { label: 'TLS bytes batching saves per hour there', value: saved * connection, unit: 'bytes' },
    );
  } finally {
    await proxy.close();
    await service.stop();
  }
  return {
    title: 'Wire: bytes on the socket per delivered sample, both ways (baseline: one operation-3 request per sample)',
    rows,
    figures,
  };
}
