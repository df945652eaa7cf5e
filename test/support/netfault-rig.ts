// The network fault matrix's rig (test/e2e/netfaults.test.ts, bench/netfaults.ts), for one kind of fault
// below HTTP: the local service on a fresh database file; in front of it what plays the fault (the TCP
// fault proxy; for TLS, a TLS terminator behind it; for a name, a DNS server on loopback); and behind it
// two Node agents in processes of their own (test/e2e/netfault-device.ts), each with its durable queue and
// the default settings: one running before, through and after the fault, one started while it lasts.
// Healthy until the running agent has delivered, the fault for `faultMs`, healthy again until the running
// agent delivers again (the resume); then it stops, delivering what is queued, and the service's file is
// counted against its ledger (soak/tally.ts).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { TlsFront } from '../../bench/tls-front';
import { deliveryProblems, tally } from '../../soak/tally';
import type { Tally } from '../../soak/tally';
import { resumeBound, waitsWithin } from '../../src/core/requests/backoff';
import { settleMs, UPLINK_DEFAULTS } from '../../src/core/config';
import { startService } from '../../src/service';
import type { DeviceArgs } from '../e2e/netfault-device';
import { COUNTERS, DEVICE, SEED } from '../e2e/support';
import { bundle } from '../node/support/bundle';
import { ROOT } from './build';
import { track } from './children';
import { LoopbackDns } from './loopback-dns';
import { TcpFaultProxy } from './tcp-fault-proxy';

export const FAULT_KINDS = ['accept-close', 'reset-writes', 'reset-all', 'blackhole', 'refuse', 'stall', 'tls-stall', 'unresolvable'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** The kinds whose failing requests end at their own timeout (`timeoutMs`), not at once. */
export const TIMING_OUT: ReadonlySet<FaultKind> = new Set(['blackhole', 'stall', 'tls-stall']);

/** The name that stops resolving: asked of the loopback DNS server alone, never of the machine's resolver. */
const NAME = 'feed-service.invalid';
/** The running agent's sensor period. */
const EVERY_MS = 500;
/** How long the running agent may take to deliver first, and to stop delivering what is queued. */
const SETTLE_MS = 60_000;

export interface KindOptions {
  faultMs: number;
  /** A directory of the kind's own. */
  dir: string;
  /** The device program, bundled (`deviceScript`). */
  script: string;
  /** How long after the fault's end the running agent may take to deliver again. */
  resumeLimitMs: number;
  /** When, into the fault, the second agent starts (default 1 s). */
  startAfterMs?: number;
}

export interface KindRun {
  kind: FaultKind;
  faultMs: number;
  /** Date.now() when the fault began and when it ended. */
  from: number;
  to: number;
  /** The running agent's own count of its requests (`stats().requests`), as it reported it every 100 ms. */
  counts: { at: number; requests: number }[];
  /** Connections, requests (when, `METHOD path`) and ClientHellos the proxy saw while the fault lasted. */
  seen: { connections: number; requests: { at: number; line: string }[]; clientHellos: number };
  /** Name lookups the DNS server answered NXDOMAIN while the fault lasted (the `unresolvable` kind). */
  nxdomains: number;
  /** How long start() took in the agent started during the fault, and its error if it rejected. */
  start: { ms: number; failed: string | null };
  /** From the fault's end to the running agent's first delivery after it; null: none within `resumeLimitMs`. */
  resumeMs: number | null;
  /** The service's file against the running agent's ledger: its last row counts them all. */
  tallies: Tally[];
  /** The running agent's `unresolved` and `ambiguous` at its stop. */
  unresolved: number;
  ambiguous: number;
  /** What is wrong with the delivery (deliveryProblems): nothing lost, no more duplicates than unresolved, in order. */
  problems: string[];
  /** The running agent's log lines. */
  logs: string[];
}

/**
 * The running agent's requests in [from, to] of its fault: its own count (after `to` less before `from`,
 * so never fewer than it made), or what reached the proxy if that is more (undici may send an idempotent
 * request again on a fresh connection when a kept-alive one fails under it).
 */
export function requestsWithin(run: KindRun, from: number, to: number): number {
  const before = run.counts.filter((c) => c.at <= from).pop() ?? run.counts[0];
  const after = run.counts.find((c) => c.at >= to) ?? run.counts[run.counts.length - 1];
  return Math.max(after.requests - before.requests, run.seen.requests.filter((r) => r.at >= from && r.at < to).length);
}

/** The uplink's backoff ladder at the default settings. */
const LADDER = { baseMs: UPLINK_DEFAULTS.backoffBaseMs, capMs: UPLINK_DEFAULTS.backoffCapMs };

/**
 * The most requests an agent may make while a fault of `ms` lasts: a failing cycle costs at most two (a
 * write, and its read-back when its outcome is unknown), and each cycle after the first waits a backoff.
 */
export function requestBudget(ms: number): number {
  return 2 * (1 + waitsWithin(LADDER, ms));
}

/**
 * The latest the running agent may deliver again after a fault of `ms`: the backoff's bound for its next
 * try, plus, where the fault's requests time out, a request's own timeout and the read-back's settle (the
 * read-back and the batch that may follow that try take a round trip on loopback).
 */
export function resumeWithin(kind: FaultKind, ms: number): number {
  return resumeBound(LADDER, ms) + (TIMING_OUT.has(kind) ? UPLINK_DEFAULTS.timeoutMs + settleMs(UPLINK_DEFAULTS) : 0);
}

/** Bundles the device program into `dir`; returns its path. */
export function deviceScript(dir: string): Promise<string> {
  return bundle(join(ROOT, 'test', 'e2e', 'netfault-device.ts'), dir, 'external');
}

/** One kind of fault, played against the running agent and the one started during it. */
export async function runKind(kind: FaultKind, options: KindOptions): Promise<KindRun> {
  mkdirSync(options.dir, { recursive: true });
  const dbFile = join(options.dir, 'service.db');
  const service = await startService({ seed: SEED, dbFile });
  const devices: DeviceProcess[] = [];
  const resource = COUNTERS[0];
  let stage: Stage | null = null;
  let run: Omit<KindRun, 'tallies' | 'problems'>;
  let exitCode: number | null;
  let done: DeviceEvent;
  try {
    const s = (stage = await stageFor(kind, service.url, options.dir));
    const device = (name: string, extra: Partial<DeviceArgs> = {}) => {
      const args = { dir: join(options.dir, name), url: s.url, publicKey: DEVICE.key, token: DEVICE.token, resource, every: EVERY_MS, ...s.device, ...extra };
      devices.push(new DeviceProcess(options.script, args));
      return devices[devices.length - 1];
    };
    const running = device('running');
    await running.until(() => (running.last('stats')?.sent ?? 0) > 0, SETTLE_MS, 'a first delivery');
    await s.begin();
    const from = Date.now();
    await sleep(options.startAfterMs ?? 1_000);
    const starting = device('starting', { startOnly: true });
    const settled = () => starting.last('started') ?? starting.last('start-failed');
    // Held as a result, not a rejection, until it is looked at after the fault.
    const started = starting.until(() => settled() !== undefined, options.faultMs + UPLINK_DEFAULTS.timeoutMs + SETTLE_MS, 'a settled start()').then(() => null, (e: Error) => e);
    await sleep(from + options.faultMs - Date.now());
    await s.end();
    const to = Date.now();
    const sentAtEnd = running.all('stats').filter((e) => e.at <= to).pop()?.sent ?? 0;
    const delivered = () => running.all('stats').find((e) => e.at >= to && e.sent > sentAtEnd);
    const resumeMs = await running.until(() => delivered() !== undefined, options.resumeLimitMs, 'a delivery after the fault').then(() => delivered()!.at - to, () => null);
    const notStarted = await started;
    if (notStarted !== null) throw notStarted;
    const start = settled()!;
    running.child.stdin!.end();
    await running.until(() => running.last('done') !== undefined, SETTLE_MS, 'a stop that delivered what was queued');
    exitCode = await running.exited;
    done = running.last('done')!;
    const window = s.window(from, to);
    run = {
      kind,
      faultMs: options.faultMs,
      from,
      to,
      counts: running.all('stats').map((e) => ({ at: e.at, requests: e.requests })),
      seen: window.seen,
      nxdomains: window.nxdomains,
      start: { ms: start.ms, failed: start.type === 'start-failed' ? start.message : null },
      resumeMs,
      unresolved: done.unresolved,
      ambiguous: done.ambiguous,
      logs: running.all('log').map((e) => e.message),
    };
  } finally {
    for (const d of devices) d.child.kill('SIGKILL');
    await stage?.close();
    await service.close();
  }
  // The service is closed: its file holds everything it answered 200 for.
  const tallies = tally(dbFile, join(options.dir, 'running'), [resource]);
  const problems = deliveryProblems(tallies, done.unresolved, exitCode);
  if (done.read !== done.accepted) problems.push(`the sensor gave ${done.read} values and ${done.accepted} were accepted`);
  return { ...run, tallies, problems };
}

/** What plays one kind of fault, and what the agents are given to reach the service through it. */
interface Stage {
  url: string;
  device: Partial<DeviceArgs>;
  begin(): Promise<void>;
  end(): Promise<void>;
  window(from: number, to: number): { seen: KindRun['seen']; nxdomains: number };
  close(): Promise<void>;
}

async function stageFor(kind: FaultKind, serviceUrl: string, dir: string): Promise<Stage> {
  const front = kind === 'tls-stall' ? await TlsFront.start(serviceUrl) : null;
  const proxy = await TcpFaultProxy.start(front?.url ?? serviceUrl);
  // Every other kind is a mode of the proxy.
  const mode = kind === 'unresolvable' ? null : kind;
  const dns = mode === null ? await LoopbackDns.start(NAME) : null;
  const stage: Stage = {
    url: front !== null ? proxy.url('https') : dns !== null ? `http://${NAME}:${proxy.port}` : proxy.url(),
    device: {},
    begin: async () => {
      if (mode !== null) return proxy.set(mode);
      dns!.resolvable = false;
      // A connection kept open would not need the name.
      proxy.dropConnections();
    },
    end: async () => {
      if (mode !== null) return proxy.set('pass');
      dns!.resolvable = true;
    },
    window: (from, to) => {
      const during = proxy.windows.filter((w) => w.from < to && (w.to ?? Infinity) > from);
      const within = (at: number) => at >= from && at < to;
      return {
        seen: {
          connections: during.reduce((n, w) => n + w.connections.filter(within).length, 0),
          requests: during.flatMap((w) => w.requests.filter((r) => within(r.at)).map((r) => ({ at: r.at, line: r.method + ' ' + r.path }))),
          clientHellos: during.reduce((n, w) => n + w.clientHellos.filter(within).length, 0),
        },
        nxdomains: dns?.queries.filter((q) => within(q.at) && q.rcode !== 0).length ?? 0,
      };
    },
    close: async () => {
      await proxy.close();
      await front?.close();
      await dns?.close();
    },
  };
  if (front !== null) {
    const caFile = join(dir, 'ca.pem');
    writeFileSync(caFile, new X509Certificate(front.rootDer).toString());
    stage.device = { caFile };
  }
  if (dns !== null) stage.device = { dns: dns.server };
  return stage;
}

interface DeviceEvent {
  type: string;
  at: number;
  [key: string]: any;
}

/** One run of the device program: its JSON events as they come. */
class DeviceProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  private readonly events: DeviceEvent[] = [];
  private out = '';
  private stderr = '';

  constructor(script: string, args: DeviceArgs) {
    this.child = track(spawn(process.execPath, [script, JSON.stringify(args)], { stdio: ['pipe', 'pipe', 'pipe'] }));
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (this.out + chunk).split('\n');
      this.out = lines.pop()!;
      for (const line of lines) this.events.push(JSON.parse(line) as DeviceEvent);
    });
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve) => this.child.on('close', (code) => resolve(code)));
  }

  all(type: string): DeviceEvent[] {
    return this.events.filter((e) => e.type === type);
  }

  last(type: string): DeviceEvent | undefined {
    return this.all(type).pop();
  }

  /** Resolves once `test` holds; rejects after `ms`, or once the process has exited without it holding. */
  async until(test: () => boolean, ms: number, what: string): Promise<void> {
    let exited = false;
    void this.exited.then(() => (exited = true));
    for (const end = Date.now() + ms; !test(); await sleep(50)) {
      if (Date.now() > end || exited) throw new Error(`no ${what} within ${ms} ms${exited ? ' (the device exited)' : ''}:\n${this.stderr}\n${this.all('log').map((e) => e.message).join('\n')}`);
    }
  }
}
