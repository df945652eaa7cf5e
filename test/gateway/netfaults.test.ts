// The gateway through faults below HTTP (issue 38): 100 devices, fed through Debian's mosquitto, behind one
// TCP fault proxy (test/support/tcp-fault-proxy.ts) in front of the real local service, at the gateway's
// default settings (50 requests a second toward the service, 16 connections, the agent's backoff). For each
// kind the proxy plays the fault for FAULT_MS, then passes again; the kinds run side by side, each with
// its own service, proxy, broker and gateway. For each kind, and for every one of the 100 devices:
// - it is polite: its requests while the fault lasts, counted by the device and in the proxy's log (by
//   the device's key in the path), stay within its ladders' budget;
// - it delivers again within the backoff's bound after the fault ends;
// - counted from the service's side, every reading the broker acknowledged to the field is stored, and
//   none is stored twice beyond what the device counted `unresolved`.
// Without mosquitto (/usr/sbin/mosquitto: `apt-get install mosquitto`) the file is skipped.
import { join } from 'node:path';
import { connectAsync } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { resumeBound, waitsWithin } from '../../src/core/requests/backoff';
import { UPLINK_DEFAULTS } from '../../src/core/config';
import { GATEWAY_DEFAULTS, parseGatewayConfig, startGateway } from '../../platforms/node/gateway';
import type { DeviceStats, Gateway } from '../../platforms/node/gateway';
import { demoFleetDevice, startService } from '../../src/service';
import { killAll } from '../support/children';
import { TcpFaultProxy } from '../support/tcp-fault-proxy';
import type { TcpMode } from '../support/tcp-fault-proxy';
import { Mosquitto, mosquittoPath, storedValues, tempDir, waitFor } from './support';

const KINDS = ['accept-close', 'reset-writes', 'reset-all', 'blackhole', 'refuse', 'stall'] as const satisfies readonly TcpMode[];
type Kind = (typeof KINDS)[number];
const DEVICES = 100;
const FAULT_MS = 20_000;
/** Each device's field device publishes a reading this often. */
const EVERY_MS = 1_000;
/** The kinds whose failing requests end at their own timeout, not at once. */
const TIMING_OUT: ReadonlySet<Kind> = new Set(['blackhole', 'stall']);
/** The fleet's counter resource (subtype 0 to 2^31 - 1, lifetime 15 min): its presence read comes every 7.5 min, past the whole run. */
const COUNTER = 4;

/** The uplink's ladder at the default settings: every failing cycle of a device waits its backoff. */
const LADDER = { baseMs: UPLINK_DEFAULTS.backoffBaseMs, capMs: UPLINK_DEFAULTS.backoffCapMs };
/**
 * A device's requests over the fault: its uplink's failing cycles, each a batch and at most one read-back
 * (its outcome unknown), one cycle more than the waits that fit. Its other ladders make none in the fault:
 * no actuator (no command poll), its lookup done before, its presence read due only past the run.
 */
const BUDGET = 2 * (1 + waitsWithin(LADDER, FAULT_MS));
/**
 * After the fault, every device's next try comes within the backoff's bound, a request's timeout later
 * where the fault's requests time out (a connection made in the fault keeps it until then); then the
 * read-back and the batch of 100 devices take their turns at the gateway's pace; and a loaded machine.
 */
const PACE_MS = (2 * DEVICES * 1000) / GATEWAY_DEFAULTS.requestsPerSecond;
const SLACK_MS = 5_000;
const resumeLimit = (kind: Kind): number => resumeBound(LADDER, FAULT_MS) + (TIMING_OUT.has(kind) ? UPLINK_DEFAULTS.timeoutMs : 0) + PACE_MS + SLACK_MS;

interface KindRun {
  /** Per device: its own count of its requests in the fault, and the proxy's. */
  requests: number[];
  seen: number[];
  /** Per device: ms from the fault's end to its first delivery after it. */
  resumeMs: number[];
  /** Per device: readings the broker acknowledged to the field, stored by the service (all, and distinct), unresolved. */
  acked: number[];
  stored: number[];
  distinct: number[];
  lost: number[];
  unresolved: number[];
  /** What the proxy saw while the fault lasted. */
  connections: number;
}

const bin = mosquittoPath();

describe.skipIf(bin === null)(`a gateway of ${DEVICES} devices through faults below HTTP, at the default settings${bin === null ? ' (skipped: no mosquitto)' : ''}`, () => {
  // The kinds run side by side from the start; each test waits for its own.
  const runs = new Map<Kind, Promise<KindRun>>();
  beforeAll(() => {
    for (const kind of KINDS) {
      const run = runKind(kind);
      // Looked at by its own test; not an unhandled rejection meanwhile.
      run.catch(() => {});
      runs.set(kind, run);
    }
  });
  afterAll(killAll);

  for (const kind of KINDS) {
    it(`${kind} for ${FAULT_MS / 1000} s: every device polite, delivering again within the bound, nothing lost`, async () => {
      const run = await (runs.get(kind) as Promise<KindRun>);
      const most = (xs: number[]) => Math.max(...xs);
      const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
      const duplicated = run.stored.map((n, i) => n - run.distinct[i]);
      console.log(
        `gateway ${kind}: requests per device in ${FAULT_MS / 1000} s at most ${most(run.requests)} (the proxy saw at most ${most(run.seen)}, ` +
          `${sum(run.seen)} in all, ${run.connections} connections; budget ${BUDGET}); resumed within ${most(run.resumeMs)} ms ` +
          `(bound ${resumeLimit(kind)}); ${sum(run.acked)} acknowledged to the field, ${sum(run.lost)} lost, ${sum(duplicated)} stored twice, ` +
          `${sum(run.unresolved)} unresolved`,
      );
      if (kind !== 'refuse') expect(run.connections).toBeGreaterThan(0);
      expect(sum(run.requests)).toBeGreaterThan(0);
      for (let d = 0; d < DEVICES; d++) {
        expect(run.requests[d], `device ${d}'s requests`).toBeLessThanOrEqual(BUDGET);
        expect(run.seen[d], `device ${d}'s requests in the proxy's log`).toBeLessThanOrEqual(BUDGET);
        expect(run.resumeMs[d], `device ${d}'s resume`).toBeLessThanOrEqual(resumeLimit(kind));
        expect(run.lost[d], `device ${d}'s readings lost`).toBe(0);
        expect(duplicated[d], `device ${d}'s readings stored twice`).toBeLessThanOrEqual(run.unresolved[d]);
      }
    }, 300_000);
  }
});

/** One kind: its own service, proxy, broker, gateway and field; healthy, the fault, healthy until all is delivered. */
async function runKind(kind: Kind): Promise<KindRun> {
  const cleanups: (() => Promise<unknown> | void)[] = [];
  try {
    const q = tempDir(`gw-netfault-${kind}-`);
    cleanups.push(q.remove);
    const service = await startService({ demoDevices: DEVICES, dashboard: {} });
    cleanups.push(() => service.close());
    const proxy = await TcpFaultProxy.start(service.url);
    cleanups.push(() => proxy.close());
    const broker = await Mosquitto.start(bin as string, q.dir);
    cleanups.push(() => broker.stop());
    const fleet = Array.from({ length: DEVICES }, (_, d) => ({ ...demoFleetDevice(d), topic: `fleet/d${d}` }));
    const config = parseGatewayConfig(
      {
        service: { url: proxy.url() },
        queue: { dir: join(q.dir, 'queue') },
        mqtt: { url: broker.url, clientId: 'netfaults-' + kind },
        metrics: false,
        status: { everyS: 0 },
        devices: fleet.map((f, d) => ({ name: 'd' + d, publicKey: f.publicKey, tokenEnv: 'T' + d, resources: [{ id: f.resources[COUNTER], mqtt: { topic: f.topic } }] })),
      },
      Object.fromEntries(fleet.map((f, d) => ['T' + d, f.token])),
      '/',
    );
    const lines: string[] = [];
    const gateway = await startGateway(config, { log: (l) => lines.push(l) });
    cleanups.push(() => gateway.stop());
    const devices = (): DeviceStats[] => gateway.stats().devices;

    // The field: each device's counter, one reading a second, QoS 1; what the broker acknowledged is counted.
    const field = await connectAsync(broker.url, { clientId: 'field-' + kind, protocolVersion: 4 });
    cleanups.push(() => field.endAsync(true));
    const acked = fleet.map(() => 0);
    const publishing = new Set<Promise<void>>();
    let n = 0;
    const tick = setInterval(() => {
      n++;
      fleet.forEach((f, d) => {
        const p = field.publishAsync(f.topic, String(n), { qos: 1 }).then(() => void acked[d]++);
        publishing.add(p);
        void p.finally(() => publishing.delete(p));
      });
    }, EVERY_MS);
    cleanups.push(() => clearInterval(tick));

    await waitFor('every device delivering', () => devices().every((s) => s.delivered > 0), 60_000);
    const requestsAt = (): number[] => devices().map((s) => s.requests);
    const before = requestsAt();
    await proxy.set(kind);
    const fault = proxy.windows[proxy.windows.length - 1];
    await new Promise((resolve) => setTimeout(resolve, FAULT_MS));
    const during = requestsAt().map((r, d) => r - before[d]);
    await proxy.set('pass');
    const to = fault.to as number;
    const deliveredAtEnd = devices().map((s) => s.delivered);
    const resumeMs = await resumes(gateway, deliveredAtEnd, to, resumeLimit(kind) + 30_000);

    // Healthy until everything is in: the field stops, every reading it published is stored.
    clearInterval(tick);
    await Promise.all(publishing);
    await waitFor('every acknowledged reading accepted and delivered', () => devices().every((s, d) => s.accepted === acked[d] && s.queued === 0), 60_000);
    await gateway.stop();
    const final = devices();
    const seen = fleet.map((f) => fault.requests.filter((r) => r.path.startsWith(`/api/device/${f.publicKey}/`)).length);
    const stored = await Promise.all(fleet.map((f) => storedValues(service.url, f.resources[COUNTER])));
    return {
      requests: during,
      seen,
      resumeMs,
      acked,
      stored: stored.map((s) => s.length),
      distinct: stored.map((s) => new Set(s).size),
      lost: stored.map((s, d) => {
        const have = new Set(s);
        let lost = 0;
        for (let v = 1; v <= acked[d]; v++) if (!have.has(String(v))) lost++;
        return lost;
      }),
      unresolved: final.map((s) => s.unresolved),
      connections: fault.connections.length,
    };
  } finally {
    for (const c of cleanups.reverse()) await c();
  }
}

/** Per device, ms from `to` to the first time its delivered count passed `deliveredAtEnd` (Infinity: not within `limitMs`). */
async function resumes(gateway: Gateway, deliveredAtEnd: number[], to: number, limitMs: number): Promise<number[]> {
  const out = deliveredAtEnd.map(() => Infinity);
  while (out.some((ms) => ms === Infinity) && Date.now() - to < limitMs) {
    const now = Date.now();
    gateway.stats().devices.forEach((s, d) => {
      if (out[d] === Infinity && s.delivered > deliveredAtEnd[d]) out[d] = now - to;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return out;
}
