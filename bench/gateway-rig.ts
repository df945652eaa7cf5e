// One run of a bridge (the gateway, or Node-RED) between a broker and the local service, each in a process
// of its own: the broker (bench/mqtt-broker.ts), the service (bench/observed-service.ts, restartable on
// its port over one SQLite file), the publisher (bench/mqtt-publisher.ts) and the bridge, which the caller
// starts and may kill. Once the publisher is done and the bridge has drained, what the service stored is
// read from its file and matched, value by value, against what the broker acknowledged to the publisher.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import { DEMO_SEED, demoFleetDevice } from '../src/service';
import type { Seed } from '../src/service';
import { sleep } from './measure';
import { freePort } from './mqtt-broker';
import type { Broker } from './mqtt-broker';
import type { PublisherArgs, Published } from './mqtt-publisher';
import type { ServiceArgs, ServiceSeen } from './observed-service';
import { SECTION_ENV } from './section';

/** Set in a helper process of the gateway section: which role it plays, with its arguments as JSON. */
export const ROLE_ENV = 'FEED_AGENT_BENCH_GATEWAY_ROLE';
const ARGS_ENV = 'FEED_AGENT_BENCH_GATEWAY_ARGS';

/** Runs this bench bundle again as `role`: the publisher or the service. */
function spawnRole(role: 'publisher' | 'service', args: PublisherArgs | ServiceArgs): ChildProcess {
  return spawn(process.execPath, [process.argv[1]], {
    env: { ...process.env, [SECTION_ENV]: 'gateway', [ROLE_ENV]: role, [ARGS_ENV]: JSON.stringify(args) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/** In a helper process: plays its role, and never returns. */
export async function playRole(role: string): Promise<never> {
  const args: unknown = JSON.parse(process.env[ARGS_ENV]!);
  if (role === 'publisher') {
    await (await import('./mqtt-publisher')).runPublisher(args as PublisherArgs);
    process.exit(0);
  }
  await (await import('./observed-service')).runService(args as ServiceArgs);
  return new Promise<never>(() => {});
}

/** `devices` devices of `perDevice` counters each: topic k is resource FIRST_ID + k of device ⌊k / perDevice⌋. */
export interface Fleet {
  devices: number;
  perDevice: number;
}

export const FIRST_ID = 1000;
const COUNTER_SUBTYPE = 8;

export const fleetTopics = (f: Fleet): number => f.devices * f.perDevice;

export function fleetSeed(f: Fleet): Seed {
  return {
    subtypes: DEMO_SEED.subtypes,
    devices: Array.from({ length: f.devices }, (_, d) => ({
      public_key: demoFleetDevice(d).publicKey,
      token: demoFleetDevice(d).token,
      name: 'Bench device ' + d,
      resources: Array.from({ length: f.perDevice }, (_, r) => ({
        id_resource: FIRST_ID + d * f.perDevice + r,
        id_resource_subtype: COUNTER_SUBTYPE,
        name: 'Counter ' + r,
        description: 'a publisher topic',
        lifetime: 60,
      })),
    })),
  };
}

/** The local service on a fixed port over one file: start() and stop() as often as an outage needs. */
export class ServiceProcess {
  private child: ChildProcess | null = null;
  private lives: ServiceSeen[] = [];
  private current: ServiceSeen = { maxAgeMs: 0, elements: 0 };

  private constructor(private readonly args: ServiceArgs) {}

  static async create(work: string, seed: Seed, epoch: number): Promise<ServiceProcess> {
    return new ServiceProcess({ seed, dbFile: join(work, 'service.db'), port: await freePort(), epoch });
  }

  get url(): string {
    return 'http://127.0.0.1:' + this.args.port;
  }

  async start(): Promise<void> {
    const child = spawnRole('service', this.args);
    this.child = child;
    this.current = { maxAgeMs: 0, elements: 0 };
    const lines = createInterface({ input: child.stdout! });
    await new Promise<void>((resolve, reject) => {
      lines.on('line', (line) => {
        if (line === 'listening') resolve();
        else if (line.startsWith('seen ')) this.current = JSON.parse(line.slice(5)) as ServiceSeen;
      });
      child.once('exit', (code) => reject(new Error('the service exited with ' + code)));
    });
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child === null) return;
    this.child = null;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    this.lives.push(this.current);
  }

  /** Over every life of the service so far. */
  seen(): ServiceSeen {
    const all = [...this.lives, this.current];
    return { maxAgeMs: Math.max(...all.map((s) => s.maxAgeMs)), elements: all.reduce((n, s) => n + s.elements, 0) };
  }

  /** Every stored value, per topic (the service must be stopped). */
  stored(f: Fleet): number[][] {
    const Database = createRequire(import.meta.url)('better-sqlite3') as typeof import('better-sqlite3');
    const db = new Database(this.args.dbFile, { readonly: true });
    try {
      const topics: number[][] = Array.from({ length: fleetTopics(f) }, () => []);
      for (const row of db.prepare('SELECT id_resource, raw_data FROM feeds ORDER BY id_resource_feed').iterate() as Iterable<{ id_resource: number; raw_data: string }>) {
        topics[row.id_resource - FIRST_ID]?.push(Number(row.raw_data));
      }
      return topics;
    } finally {
      db.close();
    }
  }
}

export interface Tally {
  /** Messages the broker acknowledged to the publisher. */
  published: number;
  /** Of them, never stored. */
  lost: number;
  /** Stored more than once (each extra copy counts). */
  duplicates: number;
  /** Stored values the publisher never had acknowledged (sent before a PUBACK that never came). */
  unacknowledgedStored: number;
  /** The oldest a value was when the service stored it. */
  maxAgeMs: number;
  /** Acknowledged messages a second the publisher kept up. */
  publishedPerSecond: number;
  /** The publisher's reconnections: each publishes again what it had no PUBACK for (mqtt-publisher.ts). */
  publisherReconnects: number;
}

export function tally(published: Published, stored: number[][], seen: ServiceSeen): Tally {
  let total = 0;
  let lost = 0;
  let duplicates = 0;
  let unacknowledged = 0;
  published.acked.forEach((values, k) => {
    total += values.length;
    const counts = new Map<number, number>();
    for (const v of stored[k] ?? []) counts.set(v, (counts.get(v) ?? 0) + 1);
    for (const v of values) {
      const n = counts.get(v) ?? 0;
      if (n === 0) lost++;
      else duplicates += n - 1;
      counts.delete(v);
    }
    for (const n of counts.values()) unacknowledged += n;
  });
  return {
    published: total,
    lost,
    duplicates,
    unacknowledgedStored: unacknowledged,
    maxAgeMs: seen.maxAgeMs,
    publishedPerSecond: total / published.seconds,
    publisherReconnects: published.reconnects,
  };
}

export interface Load {
  broker: Broker;
  topics: number;
  rate: number;
  durationMs: number;
  epoch: number;
  out: string;
}

/** Starts the publisher; resolves with what the broker acknowledged once it is done. */
export function publish(load: Load): Promise<Published> {
  const args: PublisherArgs = { url: load.broker.url, topics: load.topics, rate: load.rate, durationMs: load.durationMs, epoch: load.epoch, out: load.out };
  const child = spawnRole('publisher', args);
  child.stdout!.resume();
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      if (code === 0) resolve(JSON.parse(readFileSync(load.out, 'utf8')) as Published);
      else reject(new Error('the publisher exited with ' + code));
    });
  });
}

/**
 * Waits until the service has taken `expected` elements and then nothing more for 2 s, or, short of them
 * (lost ones never come), nothing at all for 20 s (longer than a retry's backoff after an outage), or
 * `limitMs` passed. Resolves with the time (performance.now()) at which the last element was seen come in.
 */
export async function drained(service: ServiceProcess, expected: number, limitMs: number): Promise<number> {
  let last = -1;
  let still = 0;
  let lastChange = performance.now();
  for (let waited = 0; waited < limitMs; waited += 250) {
    const { elements } = service.seen();
    still = elements === last ? still + 250 : 0;
    if (elements !== last) lastChange = performance.now();
    last = elements;
    if (still >= (elements >= expected ? 2000 : 20_000)) break;
    await sleep(250);
  }
  return lastChange;
}
