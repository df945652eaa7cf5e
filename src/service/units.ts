// The unit of a subtype's values, for the dashboard (docs/dashboard.md, Units). The interface has no
// field for it: a subtype names it in words, in its English name or its description ("Degrees Celsius",
// "Relative humidity, %", "Percentage"). Only the words below are understood; anything else has no unit,
// rather than a guessed one.
import type { Subtype } from '../core/wire/wire';

/** Words naming a unit (matched whole, ignoring case), and the symbol shown. The first match wins. */
const UNITS: [RegExp, string][] = [
  [/\b(degrees? )?celsius\b/i, '°C'],
  [/\b(degrees? )?fahrenheit\b/i, '°F'],
  [/\bkelvins?\b/i, 'K'],
  [/%|\bper ?cent(age)?\b/i, '%'],
  [/\bhectopascals?\b|\bhpa\b/i, 'hPa'],
  [/\bkilowatt[- ]hours?\b|\bkwh\b/i, 'kWh'],
  [/\bwatts?\b/i, 'W'],
  [/\bvolts?\b/i, 'V'],
  [/\b(amperes?|amps?)\b/i, 'A'],
  [/\bdbm\b/i, 'dBm'],
  [/\blux\b/i, 'lx'],
  [/\bppm\b|\bparts per million\b/i, 'ppm'],
  [/\b(lit(er|re)s?)\b/i, 'L'],
];

/** The symbol of the unit a subtype's English name or description names; null when neither names one. */
export function unitOf(subtype: Pick<Subtype, 'name_i18n' | 'description'>): string | null {
  for (const text of [subtype.name_i18n, subtype.description ?? '']) {
    for (const [words, symbol] of UNITS) if (words.test(text)) return symbol;
  }
  return null;
}
