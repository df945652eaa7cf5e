// The /metrics endpoint: Prometheus text over HTTP, on a loopback address unless configured otherwise.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

export function serveMetrics(at: { host: string; port: number }, render: () => string): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found: the metrics are at /metrics\n');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' }).end(render());
  });
  return new Promise((resolve, reject) => {
    server.once('error', (e) => reject(new Error(`the metrics endpoint cannot listen on ${at.host}:${at.port} (metrics.port; false turns it off): ${e.message}`)));
    server.listen(at.port, at.host, () => {
      server.unref();
      const { port } = server.address() as AddressInfo;
      const host = at.host.includes(':') ? `[${at.host}]` : at.host;
      resolve({ url: `http://${host}:${port}/metrics`, close: () => new Promise((done) => server.close(() => done())) });
    });
  });
}
