// Intake: a reading on its way in, from `record()`, a sensor's read or a report by exception, checked and
// queued (in memory, or in the backlog in storage), with every refusal said and counted. The agent hands
// `record()` here past its fast lane; the sampler and report by exception hand their samples here too, so
// none of them reaches back into the agent.
import type { Host, Log, SampleValue } from '../host/host';
import type { Counters } from '../host/counters';
import { Reporting } from './report';
import type { Known } from '../resources/resources';
import type { SampleSink } from './sampler';
import type { ReportConfig, SensorConfig } from '../config';
import type { SetAsides } from '../delivery/set-aside';
import type { StoredQueue } from '../queue/stored-queue';
import type { Uplink } from '../delivery/uplink';
import { DROPPED_NEW, TOO_LARGE } from '../queue/queue';
import { checkInput } from '../wire/validate';
import { errorText } from '../wire/errors';
import { poolBytes } from '../wire/utf8';

/** What `record()` did with a reading: queued (in memory or in the storage's backlog), full, or refused. */
export type RecordResult = 'queued' | 'full' | 'refused';

export interface IntakeParts {
  host: Pick<Host, 'now' | 'setTimer' | 'clearTimer'>;
  /** Report by exception's rules (none: every checked sample is queued). */
  rules: readonly ReportConfig[];
  /** `resources.byId`: an object, as XS reads a property in fewer bytecodes than it calls Map.get. */
  known: Record<number, Known>;
  sensors: readonly SensorConfig[];
  stored: Pick<StoredQueue, 'take'>;
  uplink: Pick<Uplink, 'queued'>;
  setAsides: SetAsides;
  counters: Counters;
  log: Log;
}

export class Intake implements SampleSink {
  /** Why the last reading refused was refused. */
  lastRefusal: string | null = null;
  /** Readings are taken while the agent runs. */
  open = false;
  /** Report by exception, when the agent has rules: it decides which checked samples are queued. */
  readonly reporting: Reporting | null;
  /** The last sample queued found no room: what `record()` says of a sample report by exception queued at once. */
  private lastFull = false;
  /** The resources warned about once; made at the first warning (a gateway runs thousands of agents that never warn). */
  private warned: Set<number> | null = null;
  private readonly host: Pick<Host, 'now'>;
  private readonly known: Record<number, Known>;
  private readonly sensors: readonly SensorConfig[];
  private readonly stored: Pick<StoredQueue, 'take'>;
  private readonly uplink: Pick<Uplink, 'queued'>;
  private readonly setAsides: SetAsides;
  private readonly counters: Counters;
  private readonly log: Log;

  constructor(parts: IntakeParts) {
    this.host = parts.host;
    this.known = parts.known;
    this.sensors = parts.sensors;
    this.stored = parts.stored;
    this.uplink = parts.uplink;
    this.setAsides = parts.setAsides;
    this.counters = parts.counters;
    this.log = parts.log;
    this.reporting = parts.rules.length === 0 ? null : new Reporting(parts.host, parts.rules, this);
  }

  /** Checks a reading and queues it, with every check and every report. Allocates nothing for a valid number or boolean. */
  record(resource: number, value: unknown): RecordResult {
    if (!this.open) return this.refused('the agent is not running');
    const known = this.known[resource];
    if (known === undefined) return this.invalid(resource, 'not a configured resource (list it under `resources`)');
    if (typeof value === 'number') {
      if (!isFinite(value)) return this.invalid(resource, 'value ' + String(value) + ' is not a finite number');
    } else if (typeof value !== 'boolean' && typeof value !== 'string') {
      return this.invalid(resource, 'value is ' + (value === null ? 'null' : 'a ' + typeof value) + ', not a number, boolean or string');
    }
    if (known.gone) {
      // Reported once, when the service said so (vanished.ts); counted and handed over per sample.
      this.setAsides.add(resource, value as SampleValue, 'resource ' + resource + ' is gone', true);
      return this.refused('resource ' + resource + ' is gone');
    }
    if (known.restriction) {
      const problem = checkInput(value, known.restriction);
      if (problem !== null) return this.invalid(resource, problem);
    }
    if (known.report >= 0) {
      // Report by exception decides; a report it queues later that finds no room is counted dropped.
      this.lastFull = false;
      (this.reporting as Reporting).offer(known.report, value as SampleValue, this.host.now(), known);
      return this.lastFull ? 'full' : 'queued';
    }
    return this.enqueue(resource, value as SampleValue, this.host.now());
  }

  /**
   * Queues a checked sample of time `at` (in memory or in the backlog): report by exception's way in too.
   * A string is measured here, once, and its size goes with it.
   */
  enqueue(resource: number, value: SampleValue, at: number): RecordResult {
    const bytes = poolBytes(value);
    const result = this.stored.take(resource, value, at, bytes);
    this.lastFull = result === DROPPED_NEW;
    if (result === DROPPED_NEW) return 'full';
    if (result === TOO_LARGE) return this.invalid(resource, 'string of ' + bytes + ' bytes (UTF-8) is too large for the queue');
    this.uplink.queued();
    return 'queued';
  }

  /** A sensor's reading (SampleSink). */
  sample(index: number, value: unknown): void {
    this.record(this.sensors[index].resource, value);
  }

  /** A sensor whose read threw or rejected (SampleSink). */
  readFailed(index: number, error: unknown): void {
    this.invalid(this.sensors[index].resource, 'read failed: ' + errorText(error));
  }

  private refused(reason: string): 'refused' {
    this.lastRefusal = reason;
    return 'refused';
  }

  private invalid(resource: number, reason: string): 'refused' {
    this.counters.rejectedInvalid++;
    const message = 'resource ' + resource + ': ' + reason;
    this.counters.lastError = message;
    // A broken sensor repeats itself: warn once per resource, the rest at debug level.
    const warned = (this.warned ??= new Set());
    const first = !warned.has(resource);
    if (first) warned.add(resource);
    this.log(first ? 'warn' : 'debug', message);
    return this.refused(message);
  }
}
