// Reads the sensors on schedule. Each sensor's k-th reading is due at start + k·every on the monotonic
// clock, so periods do not drift however long a read or a timer takes; a tick missed by more than a
// period is skipped, not made up in a burst. One host timer serves every sensor.
import type { Host, SampleValue } from '../host/host';
import { Alarm } from '../host/alarm';
import type { SensorConfig } from '../config';

/** Receives a reading (or the reason there is none) for sensor `index`. */
export interface SampleSink {
  sample(index: number, value: unknown): void;
  readFailed(index: number, error: unknown): void;
}

export class Sampler {
  private readonly start: Float64Array;
  private readonly period: Float64Array;
  /** Index of each sensor's next reading. */
  private readonly k: Float64Array;
  /** 1 while an asynchronous read has not settled: the sensor's next tick is skipped rather than piled up. */
  private readonly busy: Uint8Array;
  private readonly alarm: Alarm;

  constructor(
    private readonly host: Host,
    private readonly sensors: readonly SensorConfig[],
    private readonly sink: SampleSink,
  ) {
    const n = sensors.length;
    this.start = new Float64Array(n);
    this.period = new Float64Array(n);
    this.k = new Float64Array(n);
    this.busy = new Uint8Array(n);
    for (let i = 0; i < n; i++) this.period[i] = sensors[i].every;
    this.alarm = new Alarm(host, () => this.tick());
  }

  /** The first reading of every sensor is taken at once. */
  begin(): void {
    if (this.alarm.running) return;
    this.alarm.begin();
    const now = this.host.now();
    this.start.fill(now);
    this.k.fill(0);
    this.tick();
  }

  end(): void {
    this.alarm.end();
  }

  private tick(): void {
    if (!this.alarm.running) return;
    const now = this.host.now();
    let next = Infinity;
    for (let i = 0; i < this.sensors.length; i++) {
      let due = this.start[i] + this.k[i] * this.period[i];
      if (due <= now) {
        this.read(i);
        // Skip the ticks that are already past: the next reading is the first one still ahead.
        this.k[i] = Math.floor((now - this.start[i]) / this.period[i]) + 1;
        due = this.start[i] + this.k[i] * this.period[i];
      }
      if (due < next) next = due;
    }
    if (next !== Infinity && this.alarm.running) this.alarm.set(next, now);
  }

  private read(i: number): void {
    if (this.busy[i] === 1) return;
    let value: SampleValue | Promise<SampleValue>;
    try {
      value = this.sensors[i].read();
    } catch (e) {
      this.sink.readFailed(i, e);
      return;
    }
    if (isThenable(value)) {
      this.busy[i] = 1;
      value.then(
        (v) => {
          this.busy[i] = 0;
          if (this.alarm.running) this.sink.sample(i, v);
        },
        (e) => {
          this.busy[i] = 0;
          if (this.alarm.running) this.sink.readFailed(i, e);
        },
      );
      return;
    }
    this.sink.sample(i, value);
  }
}

function isThenable(v: unknown): v is Promise<SampleValue> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}
