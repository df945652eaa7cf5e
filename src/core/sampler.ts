// Reads the sensors on schedule. Each sensor's k-th reading is due at start + k·every on the monotonic
// clock, so periods do not drift however long a read or a timer takes; a tick missed by more than a
// period is skipped, not made up in a burst. One host timer serves every sensor.
import type { Host, SampleValue } from './host';
import { Alarm } from './alarm';
import type { SensorConfig } from './config';

/** Receives a reading (or the reason there is none) for sensor `index`. */
export interface SampleSink {
  sample_(index: number, value: unknown): void;
  readFailed_(index: number, error: unknown): void;
}

export class Sampler {
  private readonly start_: Float64Array;
  private readonly period_: Float64Array;
  /** Index of each sensor's next reading. */
  private readonly k_: Float64Array;
  /** 1 while an asynchronous read has not settled: the sensor's next tick is skipped rather than piled up. */
  private readonly busy_: Uint8Array;
  private readonly alarm_: Alarm;

  constructor(
    private readonly host_: Host,
    private readonly sensors_: readonly SensorConfig[],
    private readonly sink_: SampleSink,
  ) {
    const n = sensors_.length;
    this.start_ = new Float64Array(n);
    this.period_ = new Float64Array(n);
    this.k_ = new Float64Array(n);
    this.busy_ = new Uint8Array(n);
    for (let i = 0; i < n; i++) this.period_[i] = sensors_[i].every;
    this.alarm_ = new Alarm(host_, () => this.tick_());
  }

  /** The first reading of every sensor is taken at once. */
  begin_(): void {
    if (this.alarm_.running) return;
    this.alarm_.begin();
    const now = this.host_.now();
    this.start_.fill(now);
    this.k_.fill(0);
    this.tick_();
  }

  end_(): void {
    this.alarm_.end();
  }

  private tick_(): void {
    if (!this.alarm_.running) return;
    const now = this.host_.now();
    let next = Infinity;
    for (let i = 0; i < this.sensors_.length; i++) {
      let due = this.start_[i] + this.k_[i] * this.period_[i];
      if (due <= now) {
        this.read_(i);
        // Skip the ticks that are already past: the next reading is the first one still ahead.
        this.k_[i] = Math.floor((now - this.start_[i]) / this.period_[i]) + 1;
        due = this.start_[i] + this.k_[i] * this.period_[i];
      }
      if (due < next) next = due;
    }
    if (next !== Infinity && this.alarm_.running) this.alarm_.set(next, now);
  }

  private read_(i: number): void {
    if (this.busy_[i] === 1) return;
    let value: SampleValue | Promise<SampleValue>;
    try {
      value = this.sensors_[i].read();
    } catch (e) {
      this.sink_.readFailed_(i, e);
      return;
    }
    if (isThenable(value)) {
      this.busy_[i] = 1;
      value.then(
        (v) => {
          this.busy_[i] = 0;
          if (this.alarm_.running) this.sink_.sample_(i, v);
        },
        (e) => {
          this.busy_[i] = 0;
          if (this.alarm_.running) this.sink_.readFailed_(i, e);
        },
      );
      return;
    }
    this.sink_.sample_(i, value);
  }
}

function isThenable(v: unknown): v is Promise<SampleValue> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}
