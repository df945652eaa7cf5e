// What the end-to-end tests share: the CLI built once per file, simulators run as child processes (their
// JSON lines parsed as they come), a seed for a device with counters, the feeds a service stored, and a
// database with feeds from the past.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, inject } from 'vitest';
import { FeedClient } from '../../src/core/wire/client';
import { createHttp } from '../../platforms/node/host/http';
import type { Seed } from '../../src/service';
import { Store } from '../../src/service/store';
import { timestamp } from '../../src/service/time';
import { ROOT, workDir } from '../support/build';
import { killAll, track } from '../support/children';

export { ROOT, workDir };

/**
 * The hooks of a file that runs the CLI: a work directory of its own, the CLI the e2e project built once
 * (test/support/build-once.ts), no child (simulator or service) left over after a test.
 */
export function withBuiltCli(prefix: string): { dir: string; cli: () => string } {
  const work = workDir(prefix);
  const cli = join(inject('built'), 'cli.js');
  afterEach(killAll);
  afterAll(work.remove);
  return { dir: work.dir, cli: () => cli };
}

export interface SimEvent {
  type: string;
  [key: string]: any;
}

/** One `feed-agent simulate` child process. */
export class Sim {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  readonly exited: Promise<number | null>;
  private waiters: { test: (e: SimEvent) => boolean; resolve: (e: SimEvent) => void }[] = [];
  private parsed = 0;
  readonly events: SimEvent[] = [];

  constructor(cli: string, args: string[], env: Record<string, string> = {}, cwd = ROOT) {
    // Only the variables asked for: a developer's FEED_AGENT_* must not leak into a test.
    const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('FEED_AGENT_')));
    this.child = track(spawn(process.execPath, [cli, 'simulate', ...args], { cwd, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk;
      this.parse();
    });
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve) => this.child.on('close', (code, signal) => resolve(signal === null ? code : null)));
  }

  /** Resolves with the first JSON event (seen or to come) that passes `test`; rejects after `ms` or at exit. */
  next(test: (e: SimEvent) => boolean, ms = 15_000): Promise<SimEvent> {
    const seen = this.events.find(test);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no such event within ' + ms + ' ms; output:\n' + this.stdout + this.stderr)), ms);
      const waiter = {
        test,
        resolve: (e: SimEvent) => {
          clearTimeout(timer);
          resolve(e);
        },
      };
      this.waiters.push(waiter);
      void this.exited.then(() => {
        clearTimeout(timer);
        if (this.waiters.includes(waiter)) reject(new Error('the simulator exited first; output:\n' + this.stdout + this.stderr));
      });
    });
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** The events of one type. */
  all(type: string): SimEvent[] {
    return this.events.filter((e) => e.type === type);
  }

  private parse(): void {
    const lines = this.stdout.split('\n');
    for (; this.parsed < lines.length - 1; this.parsed++) {
      const line = lines[this.parsed];
      if (!line.startsWith('{')) continue;
      const event = JSON.parse(line) as SimEvent;
      this.events.push(event);
      const ready = this.waiters.filter((w) => w.test(event));
      this.waiters = this.waiters.filter((w) => !ready.includes(w));
      for (const w of ready) w.resolve(event);
    }
  }
}

/**
 * The fields `keys` of the summary a simulator prints as it ends; throws when it printed none, or one
 * without such a field, so that no check reads an undefined count as a pass.
 */
export function summaryOf<K extends string>(sim: Sim, keys: readonly K[]): Record<K, any> {
  const summary = sim.all('summary')[0];
  if (summary === undefined) throw new Error('no summary event; its last lines:\n' + sim.stdout.split('\n').slice(-6).join('\n') + sim.stderr);
  const missing = keys.filter((key) => !(key in summary));
  if (missing.length > 0) throw new Error('the summary has no ' + missing.join(', ') + ': ' + JSON.stringify(summary));
  return Object.fromEntries(keys.map((key) => [key, summary[key]])) as Record<K, any>;
}

/** Runs a simulator to its end. */
export async function runSim(cli: string, args: string[], env?: Record<string, string>): Promise<{ code: number | null; sim: Sim }> {
  const sim = new Sim(cli, args, env);
  return { code: await sim.exited, sim };
}

export const DEVICE = { key: 'E2E0000000000000000000A1', token: 'e2e-secret-token-0123456789' };
export const COUNTERS = [301, 302, 303];
export const SETPOINT = 304;

/** One device: three counter resources and a setpoint actuator. */
export const SEED: Seed = {
  subtypes: [
    subtype(8, 1, 'Counter', 0, 2147483647),
    subtype(11, 2, 'Setpoint', 5, 35),
  ],
  devices: [
    {
      public_key: DEVICE.key,
      token: DEVICE.token,
      name: 'E2E Device',
      resources: [
        ...COUNTERS.map((id) => ({ id_resource: id, id_resource_subtype: 8, name: 'Counter ' + id, description: '', lifetime: 5 })),
        { id_resource: SETPOINT, id_resource_subtype: 11, name: 'Setpoint', description: '', lifetime: 5 },
      ],
    },
  ],
};

/** A subtype of a seed: no regex, the range `begin..end`. */
export function subtype(id: number, type: number, name: string, begin: number, end: number) {
  return {
    id_resource_subtype: id,
    id_resource_type: type,
    name,
    name_i18n: name,
    description: null,
    data_format_operation: 0,
    data_restriction_regex: null,
    data_restriction_begin_range: begin,
    data_restriction_end_range: end,
  };
}

/** A config file in `dir` with a counter sensor on each of COUNTERS. */
export function counterConfig(dir: string, name: string, everyMs: number, extra: Record<string, unknown> = {}): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify({ sensors: COUNTERS.map((resource) => ({ resource, every: everyMs, signal: 'counter' })), ...extra }));
  return file;
}

/** The environment that points a simulator at the test device of the service at `url`. */
export function deviceEnv(url: string): Record<string, string> {
  return { FEED_AGENT_URL: url, FEED_AGENT_PUBLIC_KEY: DEVICE.key, FEED_AGENT_TOKEN: DEVICE.token };
}

/** A client of the test device, as a platform user writing commands or reading state would use it. */
export function deviceClient(url: string): FeedClient {
  return new FeedClient(createHttp(), { baseUrl: url, publicKey: DEVICE.key, token: DEVICE.token, timeoutMs: 5_000 });
}

/** Every feed a (closed) service stored, in the order it stored them. */
export function storedFeeds(dbFile: string): { resource: number; value: string }[] {
  const db = new Database(dbFile, { readonly: true });
  try {
    return db.prepare('SELECT id_resource AS resource, raw_data AS value FROM feeds ORDER BY id_resource_feed').all() as { resource: number; value: string }[];
  } finally {
    db.close();
  }
}

/**
 * A service database with `seed` and feeds stamped in the past (the service stamps what it is sent with
 * its clock), written as the dashboard writes them, in the order given: for `serve --db FILE`.
 */
export function feedsFile(file: string, seed: Seed, feeds: { resource: number; value: string; atMs: number }[]): void {
  const store = new Store(file);
  try {
    store.applySeed(seed, timestamp(Date.now()));
    store.transaction(() => {
      for (const f of feeds) {
        const at = timestamp(f.atMs);
        store.platformFeed({ resource: f.resource, rawData: f.value, createdAt: at }, at);
      }
    });
  } finally {
    store.close();
  }
}
