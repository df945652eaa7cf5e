// The backlog through the public API: a Node agent with the durable queue and a queue of 256 samples in
// memory records 1,000 samples a second through a 60 s outage of the local service (its proxy taken off
// the network: connections refused), is killed with SIGKILL halfway and started again on the same
// directory. Once the service is back, everything accepted is stored within 120 s at the default
// settings, counted from the service's side: every value of each run, first arrivals in order, no more
// repeats than the samples counted unresolved. RSS is sampled throughout the outage; the queue in memory
// never holds more than its 256.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { startService } from '../../src/service';
import { track } from '../support/children';
import { readBacksIn, unresolvedIn } from '../support/delivery-log';
import { FaultProxy } from '../support/fault-proxy';
import { bundle } from '../node/support/bundle';
import { COUNTERS, DEVICE, SEED, storedFeeds, withBuiltCli } from './support';
import type { SimEvent } from './support';

const RATE = 1000;
const OUTAGE_MS = 60_000;
const WINDOW = 256;
const STORED_WITHIN_MS = 120_000;
const RUN = 1_000_000;

const work = withBuiltCli('e2e-backlog-');

/** One run of test/e2e/backlog-device.ts: its JSON events as they come. */
class Device {
  readonly events: SimEvent[] = [];
  readonly exited: Promise<string | number | null>;
  private readonly child;
  private out = '';
  stderr = '';

  constructor(script: string, args: string[]) {
    this.child = track(spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }));
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      this.out += chunk;
      const lines = this.out.split('\n');
      this.out = lines.pop()!;
      for (const line of lines) this.events.push(JSON.parse(line) as SimEvent);
    });
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve) => this.child.on('close', (code, signal) => resolve(signal ?? code)));
  }

  all(type: string): SimEvent[] {
    return this.events.filter((e) => e.type === type);
  }

  last(type: string): SimEvent | undefined {
    return this.all(type).pop();
  }

  /** The last value i it reported accepted (-1: none). */
  get accepted(): number {
    return this.last('accepted')?.last ?? -1;
  }

  logs(): string[] {
    return this.all('log').map((e) => e.message as string);
  }

  async until(test: () => boolean, ms: number, what: string): Promise<void> {
    for (const end = Date.now() + ms; !test(); await sleep(50)) {
      if (Date.now() > end) throw new Error(`no ${what} within ${ms} ms:\n${this.stderr}\n${this.logs().join('\n')}`);
    }
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }
}

it(`stores everything accepted through a ${OUTAGE_MS / 1000} s outage at ${RATE} samples a second and a kill -9, within ${STORED_WITHIN_MS / 1000} s of the service's return, at the default settings`, async () => {
  const script = await bundle('../../e2e/backlog-device.ts', work.dir);
  const dbFile = join(work.dir, 'backlog.db');
  const durable = join(work.dir, 'durable');
  const service = await startService({ seed: SEED, dbFile });
  const proxy = await FaultProxy.start(service.url);
  const resource = COUNTERS[0];
  const args = (run: number, recordMs: number) => [durable, proxy.url, DEVICE.key, DEVICE.token, String(resource), String(run), String(RATE), String(recordMs)];
  const runs: Device[] = [];
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await proxy.close();
    await service.close();
  };
  try {
    const first = new Device(script, args(0, Infinity));
    runs.push(first);
    await first.until(() => first.last('started') !== undefined, 15_000, 'start');
    // The outage: the service's address refuses connections, and the open one breaks.
    await proxy.setDown(true);
    proxy.dropConnections();
    const outageBegan = Date.now();
    await sleep(OUTAGE_MS / 2);
    first.kill();
    expect(await first.exited).toBe('SIGKILL');

    const second = new Device(script, args(1, OUTAGE_MS - (Date.now() - outageBegan)));
    runs.push(second);
    await second.until(() => second.last('started') !== undefined, 15_000, 'start');
    await sleep(Math.max(0, OUTAGE_MS - (Date.now() - outageBegan)));
    await proxy.setDown(false);
    const back = Date.now();

    // Nothing left queued, acknowledged by the service (its answer comes once it has stored them).
    await second.until(() => second.last('done') !== undefined, STORED_WITHIN_MS, 'delivery of everything accepted');
    const storedAfterMs = Date.now() - back;
    expect(await second.exited).toBe(0);
    // The service keeps its file to itself while it runs.
    await close();

    // From the service's side, per run: every value reported accepted, first arrivals in order, repeats.
    const feeds = storedFeeds(dbFile).filter((f) => f.resource === resource).map((f) => Number(f.value));
    const values = new Set(feeds);
    runs.forEach((run, r) => {
      const missing = Array.from({ length: run.accepted + 1 }, (_, i) => r * RUN + i).filter((v) => !values.has(v));
      expect(missing.length, 'values of run ' + r + ' accepted and not stored, the first ' + missing.slice(0, 5).join(' ')).toBe(0);
    });
    let duplicated = 0;
    const seen = new Set<number>();
    const lastOf = [-1, -1];
    const inOrder = [true, true];
    for (const v of feeds) {
      const r = Math.floor(v / RUN);
      expect(r === 0 || r === 1, 'a value no run gave: ' + v).toBe(true);
      if (seen.has(v)) duplicated++;
      else {
        seen.add(v);
        if (v < lastOf[r]) inOrder[r] = false;
        lastOf[r] = v;
      }
    }
    expect(inOrder).toEqual([true, true]);
    const unresolved = runs.reduce((n, run) => n + unresolvedIn(run.logs()), 0);
    expect(duplicated, 'repeats against the samples counted unresolved').toBeLessThanOrEqual(unresolved);
    expect(runs.map((run) => run.last('accepted')?.notQueued)).toEqual([0, 0]);
    expect(second.last('done')).toMatchObject({ queued: 0, droppedOverflow: 0 });
    // The batch out at the kill is read back before it goes again.
    expect(readBacksIn(second.logs()).batches).toBe(1);

    // The queue in memory never held more than its window; RSS through the outage.
    const outage = runs.flatMap((run) => run.all('stats'));
    for (const s of outage) expect(s.queued - s.backlog).toBeLessThanOrEqual(WINDOW);
    const rssMb = (run: Device) => run.all('stats').map((s) => s.rss / 1024 / 1024);
    const growth = runs.map((run) => Math.max(...rssMb(run)) - rssMb(run)[0]);
    expect(Math.max(...growth)).toBeLessThan(40);
    const restored = /^restored (\d+) unacknowledged samples/.exec(second.logs().find((l) => l.startsWith('restored')) ?? '')?.[1];
    console.log(
      `backlog test: accepted ${first.accepted + 1} + ${second.accepted + 1}, stored ${seen.size} (+${duplicated} repeats, ${unresolved} unresolved), ` +
        `all stored ${(storedAfterMs / 1000).toFixed(1)} s after the service returned; restored ${restored} at the restart in ${second.last('started')!.ms.toFixed(0)} ms ` +
        `(${second.last('started')!.queued - second.last('started')!.backlog} of them in memory); most waiting ${Math.max(...outage.map((s) => s.backlog))}; ` +
        `RSS per run from ${runs.map((run) => rssMb(run)[0].toFixed(1)).join(', ')} MB, growth ${growth.map((g) => g.toFixed(1)).join(', ')} MB`,
    );
  } finally {
    await close();
  }
}, 300_000);
