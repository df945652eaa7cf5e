// The broker of the gateway benchmarks: Debian's Mosquitto in a child process with a config of its own on a
// free loopback port, or, where /usr/sbin/mosquitto is absent, aedes (the embedded broker) in a child
// process of its own, so that its CPU is never the gateway's. `kind` says which ran.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';

import { sleep } from './measure';

export const MOSQUITTO = '/usr/sbin/mosquitto';

export interface Broker {
  kind: 'mosquitto' | 'aedes';
  url: string;
  stop(): Promise<void>;
}

/** A port free on 127.0.0.1 now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

// An offline persistent session keeps at most max_queued_messages QoS 1 messages (1,000 by default), and
// drops the rest silently: a gateway down a few seconds at 5,000 msg/s needs far more (docs/gateway.md).
const MOSQUITTO_CONFIG = (port: number) => `listener ${port} 127.0.0.1
allow_anonymous true
persistence false
max_queued_messages 10000000
max_queued_bytes 0
log_dest stderr
log_type error
log_type warning
`;

// aedes in a process of its own: the script is given to `node -e`, resolving aedes from the project.
const AEDES_SCRIPT = `
const { createRequire } = require('node:module');
const req = createRequire(process.argv[1] + '/');
const aedes = req('aedes')();
const server = require('node:net').createServer(aedes.handle);
server.listen(Number(process.argv[2]), '127.0.0.1', () => console.log('listening'));
`;

/** Starts a broker (Mosquitto where installed); `work` is a directory for its config. */
export async function startBroker(work: string, root: string): Promise<Broker> {
  const port = await freePort();
  let child: ChildProcess;
  let kind: Broker['kind'];
  if (existsSync(MOSQUITTO)) {
    kind = 'mosquitto';
    const config = join(work, 'mosquitto.conf');
    writeFileSync(config, MOSQUITTO_CONFIG(port));
    child = spawn(MOSQUITTO, ['-c', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  } else {
    kind = 'aedes';
    child = spawn(process.execPath, ['-e', AEDES_SCRIPT, root, String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  }
  let errors = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (errors += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitForPort(port, exited, () => `${kind} did not start: ${errors}`);
  return {
    kind,
    url: `mqtt://127.0.0.1:${port}`,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Resolves once something accepts connections on `port`; rejects if `exited` settles first or after 10 s. */
async function waitForPort(port: number, exited: Promise<void>, why: () => string): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  for (let waited = 0; waited < 10_000 && !gone; waited += 50) {
    if (await connects(port)) return;
    await sleep(50);
  }
  throw new Error(why());
}

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
