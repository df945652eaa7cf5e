// What to simulate: from a device's resources (read through operation 2) to sensors with a plausible
// signal inside each subtype's range, plus the actuators whose commands are shown. The interface cannot
// list a device's resources, so the ids come from the caller (the demo device, --resources, the config).
import type { ReportConfig } from '../../../src/core/config';
import type { Resource, Subtype } from '../../../src/core/wire/wire';
import type { SignalSpec } from './signals';

export interface SensorPlan {
  resource: number;
  /** The resource's name, for the start-up listing; empty when unknown. */
  name: string;
  every: number;
  spec: SignalSpec;
  /** Report by exception (ReportConfig without the resource); absent: every sample is queued. */
  report?: Report;
}

export type Report = Omit<ReportConfig, 'resource'>;

/**
 * Report by exception where a real installation has it, for the demo greenhouse: a contact (a binary
 * sensor) on change, with a heartbeat; a count (the water meter's total) when it moved 10, at most once a
 * minute, with the same heartbeat. Measured sensors keep every sample, as a user would want a curve. Other
 * devices keep every sample unless their config says otherwise.
 */
export const CONTACT_REPORT: Report = Object.freeze({ deadband: 0, heartbeatMs: 300_000 });
export const TOTAL_REPORT: Report = Object.freeze({ deadband: 10, minIntervalMs: 60_000, heartbeatMs: 300_000 });

export interface ActuatorPlan {
  resource: number;
  name: string;
  every: number;
}

export interface Skipped {
  resource: number;
  name: string;
  reason: string;
}

/** A configured sensor some or all of whose readings its resource's subtype refuses (./refusals). */
export interface Refused {
  resource: number;
  name: string;
  all: boolean;
  reason: string;
}

export interface Plan {
  sensors: SensorPlan[];
  actuators: ActuatorPlan[];
  skipped: Skipped[];
  refused: Refused[];
  /** Why the configured signals could not be checked at start (the service was not reached), or null. */
  unchecked: string | null;
}

const AUTO_SENSOR_MS = 1_000;
const AUTO_ACTUATOR_MS = 2_000;

// A range this wide is a count (pulses, events), not a measurement.
const COUNT_SPAN = 1_000_000;

/**
 * A sensor for every resource whose subtype a signal can feed, an actuator for each id in `actuators`;
 * `demo`: the demo greenhouse's report rules (CONTACT_REPORT, TOTAL_REPORT).
 */
export function planFor(resources: readonly Resource[], actuators: readonly number[], demo = false): Plan {
  const plan: Plan = { sensors: [], actuators: [], skipped: [], refused: [], unchecked: null };
  for (const r of resources) {
    if (actuators.includes(r.id_resource)) {
      plan.actuators.push({ resource: r.id_resource, name: r.name, every: AUTO_ACTUATOR_MS });
      continue;
    }
    const spec = signalFor(r.subtype);
    if (typeof spec === 'string') plan.skipped.push({ resource: r.id_resource, name: r.name, reason: spec });
    else plan.sensors.push({ resource: r.id_resource, name: r.name, every: AUTO_SENSOR_MS, spec, ...(demo ? reportFor(spec) : {}) });
  }
  return plan;
}

/** The report rule a signal's resource gets without a config: see CONTACT_REPORT. */
function reportFor(spec: SignalSpec): { report?: Report } {
  if (spec.signal === 'square') return { report: CONTACT_REPORT };
  if (spec.signal === 'counter') return { report: TOTAL_REPORT };
  return {};
}

/** A plausible signal for a subtype, or why there is none. */
export function signalFor(subtype: Subtype): SignalSpec | string {
  const min = subtype.data_restriction_begin_range;
  const max = subtype.data_restriction_end_range;
  if (subtype.data_restriction_regex !== null && subtype.data_restriction_regex !== '') {
    // No signal makes up strings: the right ones for a pattern are the user's to give.
    return 'its values must match the pattern ' + subtype.data_restriction_regex + '; no signal is chosen for a pattern (a "constant" sensor in --config can feed it)';
  }
  if (!(min <= max)) return 'its range [' + min + ', ' + max + '] is empty';
  if (min === max) return { signal: 'constant', value: min };
  if (min === 0 && max === 1) return { signal: 'square', low: 0, high: 1, periodMs: 30_000 };
  if (max - min >= COUNT_SPAN) return { signal: 'counter', start: Math.min(Math.max(0, min), max) };
  const span = max - min;
  // A temperature that can be room temperature looks like one: a slow day-and-night swing.
  if (/temperat/i.test(subtype.name_i18n) && min <= 16 && max >= 28) {
    return { signal: 'sine', min: 16, max: 28, periodMs: 120_000, decimals: 1 };
  }
  return { signal: 'random-walk', start: min + span / 2, step: span / 50, min, max, decimals: span >= 50 ? 1 : 2 };
}
