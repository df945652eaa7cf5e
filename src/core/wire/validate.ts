// The subtype restriction rule (docs/interface.md, Validation), shared by the agent (which checks a sample
// before it queues it) and the local service (which answers 422): one rule, one implementation.
import type { InputValue, Subtype } from './wire';

/** A subtype's restriction, compiled once. */
export interface Restriction {
  /** Anchored: the string form of the input must match in full. Null when the subtype has no regex. */
  regex: RegExp | null;
  begin: number;
  end: number;
}

/**
 * Whether a subtype's values are booleans (0..1 with no regex): the agent hands its commands over as
 * true/false, and the local dashboard draws it as a step chart.
 */
export function isBinarySubtype(s: Pick<Subtype, 'data_restriction_regex' | 'data_restriction_begin_range' | 'data_restriction_end_range'>): boolean {
  return s.data_restriction_regex === null && s.data_restriction_begin_range === 0 && s.data_restriction_end_range === 1;
}

/**
 * Compiles a subtype's restriction. A regex may be given bare (`[0-9]+`) or with delimiters and flags
 * (`/^on|off$/i`); either way it must match the whole string form. Throws if the regex does not compile.
 */
export function compileRestriction(
  subtype: Pick<Subtype, 'data_restriction_regex' | 'data_restriction_begin_range' | 'data_restriction_end_range'>,
): Restriction {
  const source = subtype.data_restriction_regex;
  let regex: RegExp | null = null;
  if (source !== null && source !== '') {
    const delimited = /^\/(.*)\/([a-z]*)$/s.exec(source);
    const body = delimited ? delimited[1] : source;
    const flags = delimited ? delimited[2].replace(/[gy]/g, '') : '';
    regex = new RegExp('^(?:' + body + ')$', flags);
  }
  return { regex, begin: subtype.data_restriction_begin_range, end: subtype.data_restriction_end_range };
}

/** The stored string form of an input (docs/interface.md, Values): `String(n)`, `"1"`/`"0"`, or the string. */
export function rawData(input: InputValue): string {
  if (typeof input === 'boolean') return input ? '1' : '0';
  return typeof input === 'number' ? String(input) : input;
}

/** The numeric reading of an input, or NaN when it has none (a non-numeric string). */
export function numericValue(input: InputValue): number {
  if (typeof input === 'number') return input;
  if (typeof input === 'boolean') return input ? 1 : 0;
  // A decimal number as JSON or a person writes it; no whitespace, no hex, no "Infinity". In the
  // function, not at module level: see errors.ts on preloaded regular expressions.
  return /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(input) ? Number(input) : NaN;
}

/**
 * Checks one input against a restriction. Returns null when it is accepted, otherwise one sentence that
 * says why not (it names the value and the rule, never anything secret).
 */
export function checkInput(input: InputValue, restriction: Restriction): string | null {
  if (typeof input === 'number' && !isFinite(input)) return 'value ' + String(input) + ' is not a finite number';
  if (restriction.regex !== null) {
    const text = rawData(input);
    return restriction.regex.test(text) ? null : 'value ' + quote(text) + ' does not match ' + String(restriction.regex.source);
  }
  const n = numericValue(input);
  if (n !== n) return 'value ' + quote(rawData(input)) + ' is not numeric';
  if (n < restriction.begin || n > restriction.end) {
    return 'value ' + rawData(input) + ' is outside [' + restriction.begin + ', ' + restriction.end + ']';
  }
  return null;
}

function quote(text: string): string {
  return JSON.stringify(text.length > 40 ? text.slice(0, 40) + '…' : text);
}
