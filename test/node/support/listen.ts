// Test servers listen on a free loopback port, and are shut with every connection they still hold.
import { once } from 'node:events';
import type { AddressInfo, Server, Socket } from 'node:net';

const sockets = new WeakMap<Server, Set<Socket>>();

/** Returns `127.0.0.1:PORT`. */
export async function listen(server: Server): Promise<string> {
  const open = new Set<Socket>();
  sockets.set(server, open);
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return '127.0.0.1:' + (server.address() as AddressInfo).port;
}

/** A loopback port on which nothing listens: one that was free a moment ago. */
export async function closedPort(server: Server): Promise<string> {
  const address = await listen(server);
  await shut(server);
  return address;
}

export async function shut(server: Server): Promise<void> {
  if (!server.listening) return;
  const closed = once(server, 'close');
  server.close();
  for (const socket of sockets.get(server) ?? []) socket.destroy();
  await closed;
}
