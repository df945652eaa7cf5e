// An answer far larger than its request can honestly produce (issue 22, hole 3): the agent on the Node host
// reads a bounded part of it, treats it as garbled (the outcome is unknown: read back, nothing lost, nothing
// twice), and the rest never leaves the peer. Before, all 64 MB were read and parsed (RSS +274 MB).
import { afterEach, expect, it } from 'vitest';
import { createAgent } from '../../src/core';
import { createNodeHost } from '../../platforms/node/host';
import { startService } from '../../src/service';
import type { RunningService } from '../../src/service';
import { FaultProxy } from '../support/fault-proxy';
import { DEVICE, R, SCENARIO_SEED } from '../scenarios/seed';

const MB = 1024 * 1024;
let service: RunningService | null = null;
let proxy: FaultProxy | null = null;

afterEach(async () => {
  await proxy?.close();
  await service?.close();
  proxy = service = null;
});

it('reads at most the bound of a 64 MB answer to a batch, reads the batch back, and stores it once', async () => {
  service = await startService({ host: '127.0.0.1', port: 0, seed: SCENARIO_SEED });
  proxy = await FaultProxy.start(service.url);
  const agent = createAgent(createNodeHost({ holdProcess: false }), {
    url: proxy.url,
    publicKey: DEVICE.publicKey,
    token: DEVICE.token,
    resources: [R.counterA],
    seed: 7,
    uplink: { startJitterMs: 0, flushMs: 600_000, maxLatencyMs: 600_000 },
  });
  await agent.start();
  proxy.faults([{ op: 'create', action: { do: 'bloat', bytes: 64 * MB } }]);
  for (let v = 1; v <= 5; v++) expect(agent.record(R.counterA, v)).toBe('queued');
  expect(await agent.flush()).toBe(false);
  // Garbled: read back at once, found stored, not sent again.
  for (let i = 0; i < 100 && agent.stats().queued > 0; i++) await agent.flush();
  const stats = await agent.stop();
  expect([stats.sent, stats.ambiguous, stats.reconciled, stats.unresolved, stats.queued]).toEqual([5, 5, 5, 0, 0]);
  expect(proxy.stored.map((f) => f.raw_data)).toEqual([1, 2, 3, 4, 5]);
  // The adapter stopped reading at the bound and dropped the connection: the peer could hand over only
  // what fits the sockets' buffers, not the 64 MB.
  expect(proxy.bloated).toBeLessThan(16 * MB);
});
