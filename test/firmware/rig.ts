// One HTTP host's firmware on a real lin build, run in mcsim against the real local service, with the
// proxy a test puts in front of it: the tests that run both hosts at once (platform.test.ts, a platform
// it does not control; netfaults.test.ts, a network that fails below HTTP) share it. Each rig has its own
// service and fault proxy (which keeps what the service stored), its own copy of the build and its own
// XDG_CONFIG_HOME: mcsim copies what it runs into the user's config directory.
import { copyFileSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { parseSeed } from '../../src/service/seed';
import { startService } from '../../src/service';
import type { RunningService } from '../../src/service';
import { FaultProxy } from '../support/fault-proxy';
import { Simulator, buildApp } from './sdk';
import type { Sdk } from './sdk';
import { lastStatus } from './status-line';
import type { Status } from './status-line';

export const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
export const SEED = parseSeed(readFileSync(join(ROOT, 'examples', 'device-seed.json'), 'utf8'));
export const DEVICE = SEED.devices[0];
export const [UPTIME, HEAP, , COMMAND] = DEVICE.resources.map((r) => r.id_resource);
export const HOSTS = ['keep-alive', 'classic'] as const;
export type HostName = (typeof HOSTS)[number];
/** What mcsim prints when XS gives up: a chunk or slot allocation failed, or an exception nobody caught. */
export const ABORT = /Chunk allocation|Slot allocation|memory full|XS abort|stack overflow/i;

/** The proxy a test puts between the firmware and the fault proxy. */
export interface Front {
  close(): Promise<void>;
}

const NO_STATUS: Status = Object.freeze({ queued: NaN, accepted: NaN, sent: NaN, retries: NaN, dropped: NaN, setAside: NaN, unresolved: NaN, requests: NaN });

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class Rig<F extends Front> {
  service!: RunningService;
  fault!: FaultProxy;
  front!: F;
  /** The URL the firmware is built with: the front's. */
  url = '';
  library = '';
  device: Simulator | null = null;
  /** When the running device was started. */
  bootedAt = 0;

  /** `open` starts the front before the fault proxy at `upstream`, and says the URL the firmware talks to. */
  constructor(
    readonly host: HostName,
    private readonly dir: string,
    private readonly sdk: Sdk,
    private readonly open: (upstream: string) => Promise<{ front: F; url: string }>,
  ) {}

  async start(): Promise<void> {
    this.service = await startService({ seed: SEED });
    this.fault = await FaultProxy.start(this.service.url);
    const { front, url } = await this.open(this.fault.url);
    this.front = front;
    this.url = url;
  }

  /**
   * Builds the app in `app` (default this project's manifest.json) into `out` (shared: the second build
   * compiles only what differs) and keeps its own copy: an uptime sensor every second, the heap and the
   * command resource, a status line every 2 s, and `config`.
   */
  build(out: string, config: Record<string, string | number> = {}, app = ROOT): void {
    const built = buildApp(this.sdk, app, out, {
      url: this.url,
      publicKey: DEVICE.public_key,
      token: DEVICE.token,
      resources: 'uptime:' + UPTIME + ',heap:' + HEAP + ',command:' + COMMAND,
      every: 1000,
      statusEvery: 2000,
      backlogPath: join(this.dir, 'feed-agent.q'),
      http: this.host,
      ...config,
    }).library;
    this.library = join(this.dir, 'mc.so');
    copyFileSync(built, this.library);
  }

  /** Starts the device again (a power cut for the running one); `started` waits for its start line. */
  async boot(started = true): Promise<void> {
    await this.device?.kill();
    this.bootedAt = Date.now();
    this.device = new Simulator(this.sdk, this.library, join(this.dir, 'config'));
    if (started) await this.device.waitFor(/^feed-agent: started$/, 30_000);
  }

  /** Every uptime value the service stored, in the order it stored them. */
  get uptimes(): number[] {
    return this.fault.stored.filter((f) => f.id_resource === UPTIME).map((f) => Number(f.raw_data));
  }

  /** The trace lines of the running device from line `from` on that match `pattern`. */
  traced(from: number, pattern: RegExp): string[] {
    return (this.device as Simulator).lines.slice(from).filter((l) => pattern.test(l));
  }

  get lineCount(): number {
    return (this.device as Simulator).lines.length;
  }

  /** The agent's counters from its last status line (NaN before the first). */
  status(): Status {
    return lastStatus((this.device as Simulator).lines) ?? NO_STATUS;
  }

  /** Waits until `done`, or fails with the trace's tail after `ms`. */
  async until(what: string, done: () => boolean, ms: number): Promise<void> {
    const end = Date.now() + ms;
    while (!done()) {
      if (Date.now() > end) throw new Error(this.host + ': not within ' + ms + ' ms: ' + what + '\ntrace:\n' + (this.device?.trace.slice(-20).join('\n') ?? ''));
      await sleep(250);
    }
  }

  /** Asserts the device runs and has stored its uptime once a second, no gap, no repeat. */
  expectWhole(): void {
    this.expectAlive();
    const values = this.uptimes;
    expect(values, this.host + ': the stored uptimes, a reading a second').toEqual(Array.from({ length: values.length }, (_, i) => values[0] + i));
  }

  /** Asserts mcsim runs and XS gave up nowhere. */
  expectAlive(): void {
    const device = this.device as Simulator;
    expect(device.alive, this.host + ': mcsim exited').toBe(true);
    expect(device.lines.filter((l) => ABORT.test(l)), this.host).toEqual([]);
  }

  async stop(): Promise<void> {
    await this.device?.kill();
    await this.front?.close();
    await this.fault?.close();
    await this.service?.close();
  }
}

/** Runs `phase` on every rig at once; once all ended, fails with what failed on each. */
export async function both<F extends Front>(rigs: readonly Rig<F>[], phase: (rig: Rig<F>) => Promise<void>): Promise<void> {
  const failed = (await Promise.allSettled(rigs.map(phase))).flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []));
  if (failed.length === 1) throw failed[0];
  if (failed.length > 1) throw new Error(failed.map((e) => e.message).join('\n---\n'));
}
