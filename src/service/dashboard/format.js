// @ts-check
// How the page writes times and numbers, one form each wherever they appear (cards, status line, the
// charts' axes and their hover readout): times in the browser's own form, numbers rounded as the
// resource's subtype suggests (docs/dashboard.md).

const TIME = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit', second: '2-digit' });
// The same form without seconds: the charts' ticks fall on whole minutes.
const MINUTE = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' });
const DAY_AND_TIME = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', second: '2-digit' });

/** @param {number} ms */
export function timeOfDay(ms) {
  return TIME.format(ms);
}

/** @param {number} ms */
export function minuteOfDay(ms) {
  return MINUTE.format(ms);
}

/**
 * The time alone on the day of `nowMs`, else with its date.
 * @param {number} ms
 * @param {number} nowMs
 */
export function moment(ms, nowMs) {
  return new Date(ms).toDateString() === new Date(nowMs).toDateString() ? TIME.format(ms) : DAY_AND_TIME.format(ms);
}

/** The most decimals a value shows, whatever its range. */
const MAX_DECIMALS = 6;

/**
 * How many decimals a resource's values show: enough for a thousandth of its subtype's range (-40..125:
 * 1; 0..1: 3; 0..2147483647: none), so that a value shows what the sensor can tell and no float noise.
 * @param {{data_restriction_begin_range: number, data_restriction_end_range: number}} subtype
 */
export function decimalsOf(subtype) {
  const span = subtype.data_restriction_end_range - subtype.data_restriction_begin_range;
  if (!(span > 0)) return MAX_DECIMALS;
  return Math.min(MAX_DECIMALS, Math.max(0, 3 - Math.floor(Math.log10(span))));
}

/** @type {Map<string, Intl.NumberFormat>} */
const numberFormats = new Map();

/**
 * @param {'standard' | 'compact'} notation
 * @param {number} decimals
 */
function numberFormat(notation, decimals) {
  const key = notation + decimals;
  let format = numberFormats.get(key);
  if (format === undefined) {
    format = new Intl.NumberFormat('en', { notation, maximumFractionDigits: decimals });
    numberFormats.set(key, format);
  }
  return format;
}

/**
 * A number rounded to at most `decimals` places (no trailing zeros), with thousands separators.
 * @param {number} n
 * @param {number} decimals
 */
export function formatNumber(n, decimals) {
  return numberFormat('standard', decimals).format(n);
}

/**
 * The labels of a value axis: as formatNumber, but from a million up in short form (`1.28B`), with the
 * places that `step` between two ticks needs, so that a counter's axis is not wider than its chart.
 * @param {number[]} ticks
 * @param {number} step
 * @param {number} decimals
 */
export function tickLabels(ticks, step, decimals) {
  const largest = Math.max(0, ...ticks.map(Math.abs));
  if (largest < 1e6) return ticks.map((t) => formatNumber(t, decimals));
  const unit = 10 ** (3 * Math.floor(Math.log10(largest) / 3));
  const places = Math.max(0, Math.ceil(-Math.log10(step / unit) - 1e-9));
  return ticks.map((t) => numberFormat('compact', places).format(t));
}

/**
 * A value's text with its unit (`21.1 °C`, `55%`), joined by a no-break space so that they stay on one
 * line; the text alone when there is none.
 * @param {string} text
 * @param {string | null} unit
 */
export function withUnit(text, unit) {
  if (unit === null) return text;
  return unit === '%' ? text + unit : text + '\u00a0' + unit;
}
