// The local service of the gateway benchmarks, in a process of its own: the service with the bench's seed
// and an SQLite file (what it stored is counted from that file once it stopped), on a given port so that
// it can be stopped and started again there (an outage). It watches the operation-4 requests it answers
// 200: each element's input is a publisher's value (ms after the run's epoch, bench/mqtt-publisher.ts), so
// its age on arrival is now − epoch − value. It prints `seen {"maxAgeMs":…,"elements":…}` twice a second,
// and once more when SIGTERM has closed it.
import type { IncomingMessage, ServerResponse } from 'node:http';

import { createService } from '../src/service';
import type { Seed } from '../src/service';

export interface ServiceArgs {
  seed: Seed;
  dbFile: string;
  port: number;
  epoch: number;
}

export interface ServiceSeen {
  maxAgeMs: number;
  /** Elements of operation-4 requests answered 200. */
  elements: number;
}

const CREATE_FEEDS = /^\/api\/device\/[^/]+\/resources\/feeds(\?|$)/;

export async function runService(a: ServiceArgs): Promise<void> {
  const service = createService({ seed: a.seed, dbFile: a.dbFile });
  const seen: ServiceSeen = { maxAgeMs: 0, elements: 0 };
  // Before the service's own listener: the body's chunks reach both.
  service.server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST' || !CREATE_FEEDS.test(req.url ?? '')) return;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.once('finish', () => {
      if (res.statusCode !== 200) return;
      const now = Date.now() - a.epoch;
      for (const element of JSON.parse(Buffer.concat(chunks).toString('utf8')) as { input: unknown }[]) {
        seen.elements++;
        if (typeof element.input === 'number') seen.maxAgeMs = Math.max(seen.maxAgeMs, now - element.input);
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    service.server.once('error', reject);
    service.server.listen(a.port, '127.0.0.1', () => resolve());
  });
  console.log('listening');
  const report = () => console.log('seen ' + JSON.stringify(seen));
  setInterval(report, 500);
  process.once('SIGTERM', () => {
    void service.close().then(() => {
      report();
      process.exit(0);
    });
  });
}
