// A bridge under test in a child process: `feed-agent gateway --config FILE` or Node-RED with the bench's
// flow. It can be killed with SIGKILL and started again with the same command, as a crash and a restart.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { ROOT } from '../test/support/build';
import { sleep } from './measure';

const READY_MS = 30_000;

export class BridgeProcess {
  private child: ChildProcess | null = null;
  private out = '';

  constructor(
    readonly name: string,
    private readonly command: string[],
    private readonly env: Record<string, string>,
    /** A line of its output that says it is connected. */
    private readonly ready: RegExp,
  ) {}

  /** Starts it; resolves once its output matched `ready` (rejects after 30 s or if it exits first). */
  async start(): Promise<void> {
    const from = this.out.length;
    const child = spawn(process.execPath, this.command, { env: { ...process.env, ...this.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    let exited = false;
    child.once('exit', () => (exited = true));
    for (const stream of [child.stdout!, child.stderr!]) stream.setEncoding('utf8').on('data', (chunk: string) => (this.out += chunk));
    for (let waited = 0; waited < READY_MS; waited += 50) {
      if (this.ready.test(this.out.slice(from))) return;
      if (exited) break;
      await sleep(50);
    }
    throw new Error(`${this.name} did not get ready:\n${this.out.slice(from).slice(-3000)}`);
  }

  /** kill -9. */
  async kill(): Promise<void> {
    await this.end('SIGKILL');
  }

  /** SIGTERM, and SIGKILL if it has not ended within `graceMs`. */
  async stop(graceMs = 20_000): Promise<void> {
    const child = this.child;
    if (child === null) return;
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await this.end('SIGTERM');
    clearTimeout(timer);
  }

  output(): string {
    return this.out;
  }

  private async end(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (child === null) return;
    this.child = null;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }
}

/** `feed-agent gateway --config FILE` of the built CLI `cli`. */
export function gatewayProcess(cli: string, configFile: string, env: Record<string, string>): BridgeProcess {
  return new BridgeProcess('feed-agent gateway', [cli, 'gateway', '--config', configFile], env, /connected to mqtt|mqtt.*connected|subscribed/i);
}

/**
 * Node-RED 4 headless (its red.js: node-red-install.ts) with bench/node-red/flow.json and settings.cjs, in
 * its own userDir `work`. The flow reads the broker and the service from the environment (BENCH_*).
 */
export function nodeRedProcess(red: string, work: string, env: Record<string, string>): BridgeProcess {
  mkdirSync(work, { recursive: true });
  const flow = join(work, 'flow.json');
  copyFileSync(join(ROOT, 'bench', 'node-red', 'flow.json'), flow);
  return new BridgeProcess('Node-RED', [red, '--userDir', work, '--settings', join(ROOT, 'bench', 'node-red', 'settings.cjs'), flow], env, /Connected to broker/);
}
