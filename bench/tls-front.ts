// The local service as a device on the internet reaches it: behind a TLS terminator, HTTPS with a chain
// (leaf and intermediate) from a private root that the firmware is given as a resource, and a counting
// proxy in front that counts what crosses the device's socket (TLS records included) and the connections
// it opens (each one a TLS handshake). The terminator keeps an idle connection open for 60 s, as cloud
// load balancers do by default (AWS's ALB: 60 s; nginx's keepalive_timeout: 75 s), and reaches the
// service over connections of its own.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CountingProxy } from './counting-proxy';
import { makeChain } from './tls-connection';
import type { ChainOptions } from './tls-connection';

const IDLE_MS = 60_000;

export class TlsFront {
  private constructor(
    private readonly server: https.Server,
    private readonly agent: http.Agent,
    readonly counting: CountingProxy,
    /** The private root's certificate, DER: the firmware's `ca` resource. */
    readonly rootDer: Buffer,
  ) {}

  /**
   * Starts the terminator for the service at `service` (http://127.0.0.1:port) and the counting proxy
   * before it; `chain` says for what address and dates its certificates are made (makeChain).
   */
  static async start(service: string, chain: ChainOptions = {}): Promise<TlsFront> {
    const made = makeChain(chain);
    const target = new URL(service);
    const agent = new http.Agent({ keepAlive: true });
    const server = https.createServer({ key: made.key, cert: made.cert }, (req, res) => {
      const out = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers, agent }, (answer) => {
        // Hop-by-hop: the terminator's own connection to the device is not the service's.
        const { connection: _, 'keep-alive': __, ...headers } = answer.headers;
        res.writeHead(answer.statusCode ?? 502, headers);
        answer.pipe(res);
      });
      out.on('error', () => res.destroy());
      req.pipe(out);
    });
    server.keepAliveTimeout = IDLE_MS;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const counting = await CountingProxy.start((server.address() as AddressInfo).port);
    const pem = made.ca.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
    return new TlsFront(server, agent, counting, Buffer.from(pem, 'base64'));
  }

  /**
   * Writes into `dir` an app that is the app of `manifest` with the private root among its resources, as
   * `ca=test-ca.der` names it; returns `dir`.
   */
  app(dir: string, manifest: string): string {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'test-ca.der'), this.rootDer);
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ include: [manifest], resources: { '*': ['./test-ca'] } }, null, '\t'));
    return dir;
  }

  get url(): string {
    return 'https://127.0.0.1:' + this.counting.port;
  }

  async close(): Promise<void> {
    await this.counting.close();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
    this.agent.destroy();
  }
}
