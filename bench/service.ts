// The local service's throughput over real HTTP: feeds stored per second through operation 4 (batches
// of 100) beside operation 3 (one feed per request) as the baseline, in memory and in a WAL file, and
// operation 6 requests per second. The service is `feed-agent serve` in a child process (its own core, as
// users run it); a few keep-alive clients in this process keep it busy, bounded in time and count.
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEMO_PUBLIC_KEY, DEMO_RESOURCES, DEMO_TOKEN } from '../src/service';
import { VALUES } from './demo';
import type { BenchSection } from './section';
import { serve } from './serve';

const CLIENTS = 4;
const WARMUP_MS = 300;
const RUN_MS = 1500;
const MAX_REQUESTS = 20_000;
const BATCH = 100;

interface Load {
  method: 'GET' | 'POST';
  path: string;
  /** The same body each time, or a new one for each request. */
  body?: string | (() => string);
}

function send(agent: Agent, url: string, load: Load): Promise<void> {
  return new Promise((done, fail) => {
    const headers: Record<string, string> = { Authorization: `Bearer ${DEMO_TOKEN}` };
    const body = typeof load.body === 'function' ? load.body() : load.body;
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(body));
    }
    const req = request(url + load.path, { method: load.method, headers, agent }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? done() : fail(new Error(`${load.method} ${load.path}: ${res.statusCode}`))));
    });
    req.on('error', fail);
    req.end(body);
  });
}

/** Requests per second that CLIENTS keep-alive clients get answered with 200, after a warm-up. */
async function requestsPerSecond(url: string, load: Load): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  try {
    const run = async (ms: number) => {
      const end = performance.now() + ms;
      let count = 0;
      await Promise.all(
        Array.from({ length: CLIENTS }, async () => {
          while (performance.now() < end && count < MAX_REQUESTS) {
            await send(agent, url, load);
            count++;
          }
        }),
      );
      return count;
    };
    await run(WARMUP_MS);
    const start = performance.now();
    const count = await run(RUN_MS);
    return count / ((performance.now() - start) / 1000);
  } finally {
    agent.destroy();
  }
}

const root = `/api/device/${DEMO_PUBLIC_KEY}`;
const batchElements = Array.from({ length: BATCH }, (_, i) => ({ id_resource: DEMO_RESOURCES[i % DEMO_RESOURCES.length], input: VALUES[DEMO_RESOURCES[i % DEMO_RESOURCES.length]] }));
const batchLoad: Load = { method: 'POST', path: `${root}/resources/feeds`, body: JSON.stringify(batchElements) };

/**
 * The same elements as a backlog drained with ages (docs/interface.md, The sample's age): samples 100 ms
 * apart, from 12 hours back, each request going on where the last stopped, as an agent drains its backlog
 * oldest first; a group of 64 rows spans 6.4 s, so most rows are stored with a time of their own.
 */
function agedBatchLoad(): Load {
  const SAMPLE_MS = 100;
  const start = Date.now() - 12 * 3_600_000;
  let next = 0;
  return {
    ...batchLoad,
    body: () => {
      const now = Date.now();
      return JSON.stringify(batchElements.map((element) => ({ ...element, age_ms: Math.max(0, now - (start + SAMPLE_MS * next++)) })));
    },
  };
}
const singleLoad: Load = { method: 'POST', path: `${root}/resource/102/feeds`, body: JSON.stringify({ input: 21.5 }) };
const lastFeedsLoad: Load = { method: 'GET', path: `${root}/resources/${DEMO_RESOURCES.join(',')}/feeds/last` };

/** Feeds per second through operations 4 and 3, and operation-6 requests per second, on one service. */
async function rates(args: string[]): Promise<{ batch: number; aged: number; single: number; op6: number }> {
  const service = await serve(args);
  try {
    const batch = BATCH * (await requestsPerSecond(service.url, batchLoad));
    const aged = BATCH * (await requestsPerSecond(service.url, agedBatchLoad()));
    const single = await requestsPerSecond(service.url, singleLoad);
    const op6 = await requestsPerSecond(service.url, lastFeedsLoad);
    return { batch, aged, single, op6 };
  } finally {
    await service.stop();
  }
}

export async function benchService(): Promise<BenchSection> {
  const memory = await rates([]);
  const dir = mkdtempSync(join(tmpdir(), 'feed-agent-bench-'));
  let file: Awaited<ReturnType<typeof rates>>;
  try {
    file = await rates(['--db', join(dir, 'bench.db')]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    title: `Local service over HTTP (${CLIENTS} keep-alive clients; baseline: operation 3, one feed per request)`,
    rows: [
      { label: 'operation 4, batches of 100, in memory', value: Math.round(memory.batch), baseline: Math.round(memory.single), unit: 'feeds/s' },
      { label: 'operation 4, batches of 100, SQLite file (WAL)', value: Math.round(file.batch), baseline: Math.round(file.single), unit: 'feeds/s' },
      { label: 'operation 4, batches of 100 with age_ms, in memory (baseline: without)', value: Math.round(memory.aged), baseline: Math.round(memory.batch), unit: 'feeds/s' },
      { label: 'operation 4, batches of 100 with age_ms, SQLite file (baseline: without)', value: Math.round(file.aged), baseline: Math.round(file.batch), unit: 'feeds/s' },
      { label: `operation 6, ${DEMO_RESOURCES.length} ids per request, in memory`, value: Math.round(memory.op6), unit: 'requests/s' },
    ],
    figures: {
      'service.feedsPerSecond': Math.round(memory.batch),
      'service.op3FeedsPerSecond': Math.round(memory.single),
      'service.fileFeedsPerSecond': Math.round(file.batch),
      'service.agedFeedsPerSecond': Math.round(memory.aged),
      'service.fileAgedFeedsPerSecond': Math.round(file.aged),
      'service.fileOp3FeedsPerSecond': Math.round(file.single),
      'service.op6RequestsPerSecond': Math.round(memory.op6),
    },
  };
}
