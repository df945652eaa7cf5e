// The network fault matrix on the firmware (issue 38): manifest.json built for lin with each HTTP host
// (keep-alive and classic), both run at once in mcsim (rig.ts) at the default settings, against the real
// local service behind the TCP fault proxy (test/support/tcp-fault-proxy.ts), which plays each fault below
// HTTP for 20 s: each connection closed at accept; writes reset once they are in, reads answered (the
// partial outage); every request reset; a blackhole; refused; the answer stalled after its headers; and,
// over https to a TLS terminator with a private CA, a handshake that stalls. For each, on both hosts:
// - the device is polite: its requests while the fault lasts stay within the backoff's budget, and in the
//   partial outage its batch attempts (batches and their read-backs) are at most 15;
// - delivery resumes within the backoff's bound after the fault ends;
// - counted from the service's side, no reading is lost (the uptime sensor's values, one a second, have no
//   gap) and none is stored twice beyond what the device counted `unresolved`;
// - the sockets the fault left open (a blackhole's) are closed behind the requests' deadlines, and the
//   connections that failed under requests add no line each to the trace.
// Then a device started during each fault settles its start within timeoutMs + 1 s.
// Runs where the SDK is installed (MODDABLE set, its tools built, xvfb-run present); skipped elsewhere.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TlsFront } from '../../bench/tls-front';
import { resumeBound, waitsWithin } from '../../src/core/requests/backoff';
import { UPLINK_DEFAULTS } from '../../src/core/config';
import { operationOf } from '../scenarios/operation';
import { TcpFaultProxy } from '../support/tcp-fault-proxy';
import type { SeenRequest, TcpMode } from '../support/tcp-fault-proxy';
import { HOSTS, ROOT, Rig, UPTIME, both, sleep } from './rig';
import { findSdk } from './sdk';
import type { Sdk, Simulator } from './sdk';
import { readStatus } from './status-line';
import type { Status } from './status-line';

const sdk = findSdk(ROOT);
const FAULT_MS = 20_000;
const KINDS = ['reset-writes', 'reset-all', 'accept-close', 'refuse', 'blackhole', 'stall'] as const satisfies readonly TcpMode[];
type Kind = (typeof KINDS)[number] | 'tls-stall';
/** The kinds whose failing requests end at their own deadline, not at once. */
const TIMING_OUT: ReadonlySet<Kind> = new Set(['blackhole', 'stall', 'tls-stall']);
const LADDER = Object.freeze({ baseMs: UPLINK_DEFAULTS.backoffBaseMs, capMs: UPLINK_DEFAULTS.backoffCapMs });
/** Failing cycles of one retry ladder that fit in the fault: the first try, then one after each wait. */
const CYCLES = 1 + waitsWithin(LADDER, FAULT_MS);
/** The uplink's budget: a batch and its read-back each failing cycle. */
const UPLINK_BUDGET = 2 * CYCLES;
/** Every request's: the uplink's, and a command poll and a presence read each cycle of their own ladders. */
const REQUEST_BUDGET = 4 * CYCLES;
/** The most batch attempts in the 20 s partial outage (issue 38). */
const PARTIAL_OUTAGE_MOST = 15;
/** mcsim's own delays (its timers, the trace through a pipe) on this shared machine. */
const SLACK_MS = 2_500;
/** The status line's period here: the counts around a fault's edges are read from it. */
const STATUS_EVERY = 500;
/** Where both describes build: mcconfig compiles the SDK's C only once there. */
const OUT = join(ROOT, 'node_modules', '.cache', 'feed-agent-netfaults-test');

if (typeof sdk === 'string') console.log('firmware network fault tests skipped: ' + sdk);

/** What stands before a device's fault proxy: the TCP fault proxy, and behind it a TLS terminator for https. */
class Stage {
  constructor(
    readonly tcp: TcpFaultProxy,
    readonly tls: TlsFront | null,
  ) {}

  static async open(upstream: string, https: boolean): Promise<{ front: Stage; url: string }> {
    const tls = https ? await TlsFront.start(upstream) : null;
    const tcp = await TcpFaultProxy.start(tls?.url ?? upstream);
    return { front: new Stage(tcp, tls), url: tcp.url(https ? 'https' : 'http') };
  }

  async close(): Promise<void> {
    await this.tcp.close();
    await this.tls?.close();
  }
}

/** A request of the uplink: a batch (operation 4), or its read-back (the last feeds of the batch's resources, the command's not among them). */
function isUplink(request: SeenRequest): boolean {
  const op = operationOf(request.method, request.path);
  return op === 'create' || (op === 'last' && (/\/resources\/([^/]+)\/feeds\/last/.exec(request.path)?.[1] ?? '').split(',').includes(String(UPTIME)));
}

/** The status line of `device` last traced at or before `at` (`edge` 'before'), or first at or after it. */
function statusAt(device: Simulator, at: number, edge: 'before' | 'after'): Status | null {
  const lines = device.lines;
  if (edge === 'before') {
    for (let i = lines.length - 1; i >= 0; i--) if (device.at[i] <= at && readStatus(lines[i]) !== null) return readStatus(lines[i]);
    return null;
  }
  for (let i = 0; i < lines.length; i++) if (device.at[i] >= at && readStatus(lines[i]) !== null) return readStatus(lines[i]);
  return null;
}

/** The sockets the SDK holds open, from the debug build's last `instruments:` line. */
function socketsOpen(device: Simulator): number {
  const rows = device.instruments();
  return rows.length === 0 ? NaN : rows[rows.length - 1]['Network sockets'];
}

/** Plays `kind` for FAULT_MS against the running device of `rig`, then checks what it did through it and after. */
async function playFault(rig: Rig<Stage>, kind: Kind): Promise<void> {
  const proxy = rig.front.tcp;
  const device = rig.device as Simulator;
  // Healthy first: a batch stored since the phase before.
  const stored = rig.uptimes.length;
  await rig.until('a batch stored before the fault', () => rig.uptimes.length > stored, UPLINK_DEFAULTS.flushMs + 4 * SLACK_MS);
  await proxy.set(kind);
  const fault = proxy.windows[proxy.windows.length - 1];
  await sleep(FAULT_MS);
  await proxy.set('pass');
  const from = fault.from, to = fault.to as number;
  // The first batch stored after the fault, seen from the service's side (a batch a stall let through was
  // stored while the fault lasted).
  const atEnd = rig.uptimes.length;
  const bound = resumeBound(LADDER, FAULT_MS) + (TIMING_OUT.has(kind) ? UPLINK_DEFAULTS.timeoutMs : 0);
  await rig.until('a batch stored after the fault', () => rig.uptimes.length > atEnd, bound + 4 * SLACK_MS);
  const resumed = Date.now() - to;
  await rig.until('a status line after the fault', () => statusAt(device, to, 'after') !== null, 10 * STATUS_EVERY + SLACK_MS);
  const [before, after] = [statusAt(device, from, 'before') as Status, statusAt(device, to, 'after') as Status];
  const seen = fault.requests.filter(isUplink);
  // The proxy sees the requests that reach it whole; the device counts its failed tries of the uplink (a
  // refused connection or a handshake reaches no one) and every request it made.
  const uplink = Math.max(seen.length, after.retries - before.retries);
  const requests = after.requests - before.requests;
  // The connection open when the fault began may say that it ended; every failure after it is a request's,
  // which the core says once per failing endpoint, not once per try.
  const links = device.lines.filter((l, i) => device.at[i] >= from && device.at[i] <= to && l.startsWith('info: link: '));

  // Everything the fault held back arrives: the readings of its 20 s, and a few after.
  await rig.until('the fault\'s readings delivered', () => rig.uptimes.length >= stored + FAULT_MS / 1000 + 5, 3 * UPLINK_DEFAULTS.flushMs);
  const values = rig.uptimes;
  const distinct = [...new Set(values)].sort((a, b) => a - b);
  const unresolved = rig.status().unresolved;
  const sockets = socketsOpen(device);
  console.log(rig.host + ', ' + kind + ' for ' + FAULT_MS / 1000 + ' s: ' + seen.length + ' batch attempts seen (' + seen.filter((r) => r.method === 'POST').length + ' batches, ' +
    seen.filter((r) => r.method === 'GET').length + ' read-backs), ' + (after.retries - before.retries) + ' failed tries of the uplink, ' + requests + ' requests in all, ' +
    fault.connections.length + ' connections, ' + fault.clientHellos.length + ' TLS handshakes begun (budgets ' + UPLINK_BUDGET + ' and ' + REQUEST_BUDGET + '); resumed ' + resumed +
    ' ms after (bound ' + bound + ' ms); ' + (values.length - distinct.length) + ' stored twice, ' + unresolved + ' unresolved; ' + sockets + ' sockets open after');
  expect(requests, rig.host + ': the fault met the device').toBeGreaterThan(0);
  expect(uplink, rig.host + ': tries of the uplink in the fault').toBeLessThanOrEqual(UPLINK_BUDGET);
  expect(requests, rig.host + ': requests of every kind in the fault').toBeLessThanOrEqual(REQUEST_BUDGET);
  expect(fault.clientHellos.length, rig.host + ': TLS handshakes begun in the fault').toBeLessThanOrEqual(REQUEST_BUDGET);
  if (kind === 'reset-writes') expect(seen.length, rig.host + ': batch attempts in the partial outage').toBeLessThanOrEqual(PARTIAL_OUTAGE_MOST);
  expect(resumed, rig.host + ': ms from the fault\'s end to the next batch stored').toBeLessThanOrEqual(bound + SLACK_MS);
  expect(links.length, rig.host + ': ' + links.join('\n')).toBeLessThanOrEqual(1);
  expect(distinct, rig.host + ': a reading a second, none lost').toEqual(Array.from({ length: distinct.length }, (_, i) => distinct[0] + i));
  expect(values.length - distinct.length, rig.host + ': readings stored twice, against ' + unresolved + ' unresolved').toBeLessThanOrEqual(unresolved);
  expect(rig.status().dropped, rig.host).toBe(0);
  // What the fault left open (a blackhole never closes) was closed behind each request's deadline: at
  // most the keep-alive host's one connection and a request's own remain.
  expect(sockets, rig.host + ': sockets open after the fault').toBeLessThanOrEqual(2);
  rig.expectAlive();
}

/** Boots the device of `rig` during each of `kinds`: its start settles within timeoutMs + 1 s. */
async function startDuring(rig: Rig<Stage>, kinds: readonly Kind[]): Promise<void> {
  const settled: string[] = [];
  for (const kind of kinds) {
    await rig.front.tcp.set(kind);
    await rig.boot(false);
    const device = rig.device as Simulator;
    // The line the firmware traces as it calls agent.start().
    const begun = await device.waitFor(/^feed-agent: device /, 30_000);
    const end = await device.waitFor(/^feed-agent: (started|not started)/, UPLINK_DEFAULTS.timeoutMs + 1_000 + 30_000, begun);
    const ms = device.at[end] - device.at[begun];
    settled.push(kind + ' ' + ms + ' ms (' + device.lines[end].slice('feed-agent: '.length) + ')');
    expect(ms, rig.host + ': start() during ' + kind).toBeLessThanOrEqual(UPLINK_DEFAULTS.timeoutMs + 1_000 + SLACK_MS);
    await rig.front.tcp.set('pass');
  }
  console.log(rig.host + ': start() settled during ' + settled.join(', '));
  rig.expectAlive();
}

/** Both hosts' rigs, over http or https, built and booted; removed after the describe. */
function rigsFor(https: boolean): () => Rig<Stage>[] {
  let dir = '';
  let rigs: Rig<Stage>[] = [];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'feed-agent-netfaults-'));
    rigs = HOSTS.map((host) => {
      mkdirSync(join(dir, host, 'config'), { recursive: true });
      return new Rig(host, join(dir, host), sdk as Sdk, (upstream) => Stage.open(upstream, https));
    });
    await both(rigs, (rig) => rig.start());
    // One after the other, in one output folder: the machine is shared, and the second build is short.
    for (const rig of rigs) {
      const tls = rig.front.tls;
      // Over https, the app is manifest.json with the terminator's private root among its resources.
      if (tls === null) rig.build(OUT, { statusEvery: STATUS_EVERY });
      else rig.build(OUT, { statusEvery: STATUS_EVERY, ca: 'test-ca.der' }, tls.app(join(OUT, 'netfaults-tls'), join(ROOT, 'manifest.json')));
    }
    await both(rigs, (rig) => rig.boot());
    await both(rigs, (rig) => rig.until('uptime feeds stored', () => rig.uptimes.length >= 5, 40_000));
  }, 1_200_000);
  afterAll(async () => {
    await both(rigs, (rig) => rig.stop());
    rmSync(dir, { recursive: true, force: true });
  });
  return () => rigs;
}

describe.skipIf(typeof sdk === 'string')('the firmware through faults below HTTP (lin build, both HTTP hosts at once, default settings)', () => {
  const rigs = rigsFor(false);

  for (const kind of KINDS) {
    it(`${kind} for ${FAULT_MS / 1000} s: polite, resumes within the backoff's bound, loses nothing, stores nothing twice beyond what it counted unresolved`, async () => {
      await both(rigs(), (rig) => playFault(rig, kind));
    }, 300_000);
  }

  // Last: it reboots the devices, and a new boot's uptime starts again from 0.
  it('a device started during each fault settles its start within timeoutMs + 1 s', async () => {
    await both(rigs(), (rig) => startDuring(rig, KINDS));
  }, 600_000);
});

describe.skipIf(typeof sdk === 'string')('the firmware over TLS through a handshake that stalls (lin build, both HTTP hosts at once)', () => {
  const rigs = rigsFor(true);

  it(`tls-stall for ${FAULT_MS / 1000} s: each handshake ends at its request's deadline; polite, resumes, loses nothing`, async () => {
    await both(rigs(), (rig) => playFault(rig, 'tls-stall'));
  }, 300_000);

  it('a device started while handshakes stall settles its start within timeoutMs + 1 s', async () => {
    await both(rigs(), (rig) => startDuring(rig, ['tls-stall']));
  }, 300_000);
});
