// A TCP proxy on 127.0.0.1 that counts the bytes it carries, both ways together:
// what a client and a server exchange on the socket (request lines, headers, bodies; TLS records when
// they speak TLS), measured rather than estimated. TCP/IP headers are not counted.
import { createConnection, createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';

export class CountingProxy {
  /** Bytes carried since the start or the last reset, both ways. */
  bytes = 0;
  /** Connections accepted since the start (each a TLS handshake when they speak TLS). */
  connections = 0;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** Listens on a free port of 127.0.0.1 and forwards every connection to `port` on 127.0.0.1. */
  static async start(port: number): Promise<CountingProxy> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const proxy = new CountingProxy(server, (server.address() as AddressInfo).port);
    server.on('connection', (client) => proxy.carry(client, port));
    return proxy;
  }

  get url(): string {
    return 'http://127.0.0.1:' + this.port;
  }

  /** Starts counting afresh. */
  reset(): void {
    this.bytes = 0;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private carry(client: Socket, port: number): void {
    this.connections++;
    const server = createConnection(port, '127.0.0.1');
    for (const socket of [client, server]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      // Either side going away ends the other: the proxy never keeps a half of a connection.
      socket.on('error', () => {
        client.destroy();
        server.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => {
      this.bytes += chunk.length;
      server.write(chunk);
    });
    server.on('data', (chunk: Buffer) => {
      this.bytes += chunk.length;
      client.write(chunk);
    });
    client.on('end', () => server.end());
    server.on('end', () => client.end());
  }
}
