// The field devices of the gateway benchmarks: one mqtt.js client in a process of its own (so its CPU is
// never the gateway's) publishing QoS 1 to `topics` topics round-robin at `rate` messages a second.
// Each payload is a number that says when it was sent and is unique on its topic: the milliseconds since
// the run's epoch, raised to one above the topic's last value where two fall in one millisecond. The
// service side reads a stored value back as the sample's birth time (its age) and as its identity (lost,
// duplicated). What the broker acknowledged (PUBACK) is what the broker got: those values are written to
// `out`, per topic, when the run ends.
import { writeFileSync } from 'node:fs';
import mqtt from 'mqtt';

import { sleep } from './measure';

export interface PublisherArgs {
  url: string;
  topics: number;
  /** Messages a second, over all topics. */
  rate: number;
  durationMs: number;
  /** Date.now() of the run's epoch, shared with the service side. */
  epoch: number;
  out: string;
}

export interface Published {
  /** Per topic, the values the broker acknowledged, in increasing order. */
  acked: number[][];
  sent: number;
  /** Publishes that failed (a connection lost before the PUBACK); mqtt.js resends them on reconnection. */
  failed: number;
  /**
   * Times the connection was lost and made again. On each, mqtt.js publishes again every message it had
   * no PUBACK for (its outgoing store, clean session or not): the broker then has those it got before the
   * loss twice, and the gateway stores both, as QoS 1 allows.
   */
  reconnects: number;
  seconds: number;
}

export const topicOf = (k: number): string => 'bench/d' + k;

/** The value of a payload, in ms after the epoch. */
export function valueOf(payload: string): number {
  return Number(payload);
}

const TICK_MS = 5;

export async function runPublisher(a: PublisherArgs): Promise<void> {
  // A clean session: the publisher's own state does not matter to the run.
  const client = mqtt.connect(a.url, { clientId: 'bench-publisher-' + process.pid, clean: true, reconnectPeriod: 200 });
  await new Promise<void>((resolve, reject) => {
    client.once('connect', () => resolve());
    client.once('error', reject);
  });
  let reconnects = 0;
  client.on('reconnect', () => reconnects++);
  const last = new Float64Array(a.topics);
  const acked: number[][] = Array.from({ length: a.topics }, () => []);
  let sent = 0;
  let failed = 0;
  let pending = 0;
  const t0 = performance.now();
  let k = 0;
  for (;;) {
    const elapsed = performance.now() - t0;
    if (elapsed >= a.durationMs) break;
    const due = Math.floor((a.rate * elapsed) / 1000);
    // Never more than a tick's worth at once after a stall: the run's rate is what it could keep.
    for (let n = Math.min(due - sent, Math.ceil((a.rate * TICK_MS * 4) / 1000)); n > 0; n--) {
      const topic = k;
      k = (k + 1) % a.topics;
      const value = Math.max(last[topic] + 1, Date.now() - a.epoch);
      last[topic] = value;
      sent++;
      pending++;
      client.publish(topicOf(topic), String(value), { qos: 1 }, (error) => {
        pending--;
        if (error) failed++;
        else acked[topic].push(value);
      });
    }
    await sleep(TICK_MS);
  }
  const seconds = (performance.now() - t0) / 1000;
  for (let waited = 0; pending > 0 && waited < 20_000; waited += 50) await sleep(50);
  await client.endAsync();
  // PUBACKs can come out of order across a reconnection.
  for (const values of acked) values.sort((x, y) => x - y);
  const result: Published = { acked, sent, failed, reconnects, seconds };
  writeFileSync(a.out, JSON.stringify(result));
}
