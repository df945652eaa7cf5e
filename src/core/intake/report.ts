// Report by exception: per configured resource, which of its samples go to the queue. A sample goes when it
// changed enough since the last one that went (a deadband, absolute or in percent of the subtype's range),
// but not sooner than a minimum interval after it (a change within the interval waits for its end, and
// the newest value then goes); after a heartbeat interval without a report, the last value goes anyway,
// so that presence and the platform's "last value" stay fresh. With an aggregate, a report carries the
// mean, min or max of the samples since the last report rather than the newest.
//
// "Changed": a number by at least the deadband (any difference with a deadband of 0; without a deadband
// every sample counts as changed, and only the minimum interval thins them); a boolean or a string when
// it differs at all. State is one slot per field in typed arrays made at start, so a number or boolean
// costs no allocation, as in the queue. One host timer serves every resource.
import type { Host, SampleValue } from '../host/host';
import { Alarm } from '../host/alarm';
import type { ReportConfig } from '../config';
import type { Known } from '../resources/resources';

/** Queues one report: the agent's path into the queue, with the report's time. */
/** Where a report goes: queued, as a checked sample of its time. */
export interface ReportSink {
  enqueue(resource: number, value: SampleValue, at: number): unknown;
}

const NONE = 0, MEAN = 1, MIN = 2, MAX = 3;
const AGGREGATES: Readonly<Record<string, number>> = Object.freeze({ mean: MEAN, min: MIN, max: MAX });
// A sample's kind: numbers and booleans keep their value in `value` arrays; strings beside them.
const NUMBER = 0, BOOLEAN = 1, STRING = 2;

export class Reporting {
  /** Resource ids, by rule. */
  readonly ids: Uint32Array;
  private readonly deadband: Float64Array;
  private readonly percent: Float64Array;
  private readonly minInterval: Float64Array;
  private readonly heartbeat: Float64Array;
  private readonly aggregate: Uint8Array;
  /** What went last: its value, kind, string and time (-Infinity: nothing yet). */
  private readonly sentValue: Float64Array;
  private readonly sentKind: Uint8Array;
  private readonly sentString: (string | null)[];
  private readonly sentAt: Float64Array;
  /** The newest sample seen, which a report made by the timer carries. */
  private readonly lastValue: Float64Array;
  private readonly lastKind: Uint8Array;
  private readonly lastString: (string | null)[];
  private readonly lastAt: Float64Array;
  /** 1: a change came within the minimum interval and waits for its end. */
  private readonly pending: Uint8Array;
  /** The samples since the last report, for an aggregate. */
  private readonly sum: Float64Array;
  private readonly count: Float64Array;
  private readonly low: Float64Array;
  private readonly high: Float64Array;
  private readonly alarm: Alarm;
  /** Samples held back rather than queued at once: a later report (the newest value, an aggregate) stood for them. */
  heldBack = 0;

  constructor(
    private readonly host: Pick<Host, 'now' | 'setTimer' | 'clearTimer'>,
    rules: readonly ReportConfig[],
    private readonly sink: ReportSink,
  ) {
    const n = rules.length;
    this.ids = new Uint32Array(n);
    this.deadband = new Float64Array(n);
    this.percent = new Float64Array(n);
    this.minInterval = new Float64Array(n);
    this.heartbeat = new Float64Array(n);
    this.aggregate = new Uint8Array(n);
    this.sentValue = new Float64Array(n);
    this.sentKind = new Uint8Array(n);
    this.sentString = [];
    this.sentAt = new Float64Array(n).fill(-Infinity);
    this.lastValue = new Float64Array(n);
    this.lastKind = new Uint8Array(n);
    this.lastString = [];
    this.lastAt = new Float64Array(n).fill(-Infinity);
    this.pending = new Uint8Array(n);
    this.sum = new Float64Array(n);
    this.count = new Float64Array(n);
    this.low = new Float64Array(n);
    this.high = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const r = rules[i];
      this.ids[i] = r.resource;
      // -1: no deadband (every sample counts as changed).
      this.deadband[i] = r.deadband ?? (r.deadbandPercent === undefined ? -1 : 0);
      this.percent[i] = r.deadbandPercent ?? 0;
      this.minInterval[i] = r.minIntervalMs ?? 0;
      this.heartbeat[i] = r.heartbeatMs ?? 0;
      this.aggregate[i] = r.aggregate === undefined ? NONE : AGGREGATES[r.aggregate];
      this.sentString.push(null);
      this.lastString.push(null);
    }
    this.alarm = new Alarm(host, () => this.due());
  }

  begin(): void {
    this.alarm.begin();
    this.plan();
  }

  /** Stops the timer; a change still waiting for its interval goes now, so that stop() delivers it. */
  end(): void {
    if (!this.alarm.running) return;
    this.alarm.end();
    for (let i = 0; i < this.ids.length; i++) if (this.pending[i] === 1) this.report(i, this.lastAt[i]);
  }

  /**
   * A checked sample of rule `i` at `at`: queued now through the sink when it is to be reported, else held
   * (the newest value, or the aggregate, goes later, or a later report stands for it).
   */
  offer(i: number, value: SampleValue, at: number, known: Known): void {
    const kind = typeof value === 'number' ? NUMBER : typeof value === 'boolean' ? BOOLEAN : STRING;
    this.lastKind[i] = kind;
    this.lastAt[i] = at;
    if (kind === STRING) this.lastString[i] = value as string;
    else this.lastValue[i] = kind === NUMBER ? (value as number) : value ? 1 : 0;
    if (kind === NUMBER && this.aggregate[i] !== NONE) this.accumulate(i, value as number);
    else this.count[i] = 0;
    const first = this.sentAt[i] === -Infinity;
    if (!first && !this.changed(i, known)) {
      this.heldBack++;
      // Without a change, only the heartbeat (its timer) reports.
      return;
    }
    if (!first && at < this.sentAt[i] + this.minInterval[i]) {
      if (this.pending[i] === 0) {
        this.pending[i] = 1;
        this.plan();
      }
      this.heldBack++;
      return;
    }
    this.report(i, at);
  }

  /** Whether the newest sample (or the aggregate) of rule `i` differs enough from what went last. */
  private changed(i: number, known: Known): boolean {
    const kind = this.lastKind[i];
    if (kind !== this.sentKind[i]) return true;
    if (kind === STRING) return this.lastString[i] !== this.sentString[i];
    const value = this.count[i] > 0 ? this.aggregated(i) : this.lastValue[i];
    if (kind === BOOLEAN) return value !== this.sentValue[i];
    const band = this.deadband[i];
    if (band < 0) return true;
    const r = known.restriction;
    // A percent of the subtype's range, once the lookup told it.
    const wide = r && r.end > r.begin && r.end !== Infinity && r.begin !== -Infinity ? ((r.end - r.begin) * this.percent[i]) / 100 : 0;
    const least = band > wide ? band : wide;
    const moved = value > this.sentValue[i] ? value - this.sentValue[i] : this.sentValue[i] - value;
    return least > 0 ? moved >= least : moved > 0;
  }

  /** Reports the newest sample of rule `i` (or the aggregate of the samples since the last report), of time `at`. */
  private report(i: number, at: number): void {
    const kind = this.lastKind[i];
    const value = kind === STRING ? (this.lastString[i] as string) : this.count[i] > 0 ? this.aggregated(i) : this.lastValue[i];
    this.sentKind[i] = kind;
    if (kind === STRING) this.sentString[i] = value as string;
    else this.sentValue[i] = value as number;
    this.sentAt[i] = at;
    this.pending[i] = 0;
    this.count[i] = 0;
    this.sink.enqueue(this.ids[i], kind === BOOLEAN ? value === 1 : value, at);
    this.plan();
  }

  private accumulate(i: number, v: number): void {
    if (this.count[i] === 0) {
      this.sum[i] = 0;
      this.low[i] = v;
      this.high[i] = v;
    }
    this.sum[i] += v;
    this.count[i]++;
    if (v < this.low[i]) this.low[i] = v;
    if (v > this.high[i]) this.high[i] = v;
  }

  private aggregated(i: number): number {
    const a = this.aggregate[i];
    return a === MEAN ? this.sum[i] / this.count[i] : a === MIN ? this.low[i] : this.high[i];
  }

  /** The timer: changes whose interval ended go with the time of their newest sample, heartbeats with now. */
  private due(): void {
    const now = this.host.now();
    for (let i = 0; i < this.ids.length; i++) {
      if (this.sentAt[i] === -Infinity) continue;
      if (this.pending[i] === 1 && now >= this.sentAt[i] + this.minInterval[i]) {
        this.report(i, this.lastAt[i]);
      } else if (this.heartbeat[i] > 0 && now >= this.sentAt[i] + this.heartbeat[i]) {
        // The value still holds: it goes again, stamped now. An aggregate carries what came since.
        this.report(i, now);
      }
    }
    this.plan();
  }

  /** Arms the one timer for the earliest interval end or heartbeat. */
  private plan(): void {
    if (!this.alarm.running) return;
    let next = Infinity;
    for (let i = 0; i < this.ids.length; i++) {
      const sent = this.sentAt[i];
      if (sent === -Infinity) continue;
      if (this.pending[i] === 1 && sent + this.minInterval[i] < next) next = sent + this.minInterval[i];
      if (this.heartbeat[i] > 0 && sent + this.heartbeat[i] < next) next = sent + this.heartbeat[i];
    }
    // A timer armed for sooner stays: it finds nothing due and plans again. So a heartbeat moved on by
    // every report costs no new host timer per report.
    if (next === Infinity) this.alarm.cancel();
    else if (!this.alarm.armed || next < this.alarm.dueAt) this.alarm.set(next, this.host.now());
  }
}
