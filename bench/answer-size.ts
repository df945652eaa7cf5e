// Memory under an oversized answer: a batch of 5 whose operation-4 answer is 64 MB (the service's answer
// padded with spaces: still valid JSON), through the agent on the Node host, which reads at most the
// request's maxResponseBytes and reads the batch back. Baseline: the same agent on a request function that
// reads the whole answer (`response.text()`), as the Node host did before issue 22. Figures: the rise of
// the process's RSS (agent, service and proxy in one process) while the answer comes, peak over sampling
// every 5 ms, and how much of the answer the peer could hand over before the connection was dropped.
import { createAgent } from '../src/core';
import type { Host, HttpRequest, HttpResult } from '../src/core';
import { createNodeHost } from '../platforms/node/host/host';
import { startService } from '../src/service';
import { FaultProxy } from '../test/support/fault-proxy';
import { DEVICE, R, SCENARIO_SEED } from '../test/scenarios/seed';
import type { BenchSection } from './section';

const MB = 1024 * 1024;

interface Run {
  riseMB: number;
  handedMB: number;
}

/** Reads every answer whole: the Node host's HTTP before issue 22. */
async function unbounded(req: HttpRequest): Promise<HttpResult> {
  const response = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body, redirect: 'manual' });
  return { kind: 'response', status: response.status, retryAfter: null, body: await response.text() };
}

async function run(host: Host): Promise<Run> {
  const service = await startService({ host: '127.0.0.1', port: 0, seed: SCENARIO_SEED });
  const proxy = await FaultProxy.start(service.url);
  try {
    const agent = createAgent(host, {
      url: proxy.url, publicKey: DEVICE.publicKey, token: DEVICE.token, resources: [R.counterA], seed: 7,
      uplink: { startJitterMs: 0, flushMs: 600_000, maxLatencyMs: 600_000 },
    });
    await agent.start();
    (globalThis as { gc?: () => void }).gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    proxy.faults([{ op: 'create', action: { do: 'bloat', bytes: 64 * MB } }]);
    for (let v = 1; v <= 5; v++) agent.record(R.counterA, v);
    for (let i = 0; i < 100 && agent.stats().queued > 0; i++) await agent.flush();
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    await agent.stop();
    return { riseMB: Math.round(((peak - before) / MB) * 10) / 10, handedMB: Math.round((proxy.bloated / MB) * 10) / 10 };
  } finally {
    await proxy.close();
    await service.close();
  }
}

export async function benchAnswerSize(): Promise<BenchSection> {
  // Bounded first: the baseline's 64 MB would still be in the heap.
  const bounded = await run(createNodeHost({ holdProcess: false }));
  const whole = await run(createNodeHost({ holdProcess: false, request: unbounded }));
  return {
    title: 'A 64 MB answer to a batch of 5, Node host (baseline: the answer read whole, as before issue 22)',
    rows: [
      { label: 'RSS rise while it comes, peak', value: bounded.riseMB, baseline: whole.riseMB, unit: 'MB' },
      { label: 'bytes of it the peer could hand over', value: bounded.handedMB, baseline: whole.handedMB, unit: 'MB' },
    ],
    figures: { 'answer.rssRiseMB': bounded.riseMB, 'answer.handedMB': bounded.handedMB },
  };
}
