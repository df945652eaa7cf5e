// Which readings of a configured signal its resource's subtype would refuse, said before the run starts:
// the agent checks every reading against the subtype and counts a refused one without queuing it, so a
// signal outside the resource's range would otherwise run quietly and deliver nothing. The rule is the
// agent's own (core/validate); the signal's readings are known from its parameters.
import { checkInput, compileRestriction } from '../../../src/core/wire/validate';
import type { Restriction } from '../../../src/core/wire/validate';
import type { SampleValue } from '../../../src/core/host/host';
import type { Subtype } from '../../../src/core/wire/wire';
import type { SignalSpec } from './signals';

export interface Refusal {
  /** Every reading would be refused, not only some. */
  all: boolean;
  /** Which readings, and why, e.g. `every reading: the signal's 100..200 lies outside the resource's -40..125`. */
  reason: string;
}

// A counter that outgrows its range within a day of readings is worth a word; one that takes years is not.
const COUNTER_HORIZON_MS = 86_400_000;

/** The readings of `spec`, read every `everyMs`, that `subtype` refuses, or null when it takes all of them. */
export function refusedReadings(spec: SignalSpec, everyMs: number, subtype: Subtype): Refusal | null {
  const restriction = compileRestriction(subtype);
  const pattern = subtype.data_restriction_regex ?? '';
  switch (spec.signal) {
    case 'constant':
      return discrete([spec.value], restriction);
    case 'square':
      return discrete([spec.high, spec.low], restriction);
    case 'counter':
      return restriction.regex === null
        ? counter(spec.start, everyMs, restriction)
        : sampled([spec.start, spec.start + 1, spec.start + 1000], restriction, 'a count from ' + spec.start, pattern);
    case 'sine':
    case 'random':
    case 'random-walk':
      return restriction.regex === null
        ? range(spec.min, spec.max, restriction)
        : sampled([spec.min, spec.max, (spec.min + spec.max) / 2], restriction, `numbers from ${spec.min} to ${spec.max}`, pattern);
  }
}

/** A signal of a few values: each checked as the agent will check it. */
function discrete(values: SampleValue[], restriction: Restriction): Refusal | null {
  const distinct = [...new Set(values)];
  const refused = distinct.map((v) => checkInput(v, restriction)).filter((problem): problem is string => problem !== null);
  if (refused.length === 0) return null;
  const all = refused.length === distinct.length;
  return { all, reason: (all ? 'every reading: ' : 'some readings: ') + refused.join('; ') };
}

/** Readings anywhere in min..max against a range. */
function range(min: number, max: number, r: Restriction): Refusal | null {
  if (min >= r.begin && max <= r.end) return null;
  const ranges = `the signal's ${min}..${max} ${max < r.begin || min > r.end ? 'lies outside' : 'goes beyond'} the resource's ${r.begin}..${r.end}`;
  if (max < r.begin || min > r.end) return { all: true, reason: 'every reading: ' + ranges };
  const parts = [...(min < r.begin ? [`those below ${r.begin}`] : []), ...(max > r.end ? [`those above ${r.end}`] : [])];
  return { all: false, reason: parts.join(' and ') + ': ' + ranges };
}

/** start, start+1, … one every `everyMs`, against a range. */
function counter(start: number, everyMs: number, r: Restriction): Refusal | null {
  if (start > r.end) return { all: true, reason: `every reading: a count from ${start} lies above the resource's ${r.begin}..${r.end}` };
  const outgrownAfterMs = (r.end - start + 1) * everyMs;
  const parts = [
    ...(start < r.begin ? [`the first ${r.begin - start} (below ${r.begin})`] : []),
    ...(outgrownAfterMs <= COUNTER_HORIZON_MS ? [`those above ${r.end}, after ${Math.ceil(outgrownAfterMs / 1000)} s`] : []),
  ];
  return parts.length === 0 ? null : { all: false, reason: parts.join(' and ') + `: a count from ${start} against the resource's ${r.begin}..${r.end}` };
}

/** Numbers against a pattern: a few of them tried, since a pattern's language is not a range. */
function sampled(values: number[], r: Restriction, what: string, pattern: string): Refusal | null {
  const matching = values.filter((v) => checkInput(v, r) === null).length;
  if (matching === values.length) return null;
  const why = `its readings are ${what}, and the resource takes only text matching ${pattern}`;
  return matching === 0 ? { all: true, reason: 'every reading: ' + why } : { all: false, reason: 'those that do not match: ' + why };
}
