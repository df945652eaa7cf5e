// @ts-check
// A resource's recent values as a chart: numbers as a line, booleans as a step chart, through uPlot
// (small, fast, made for time series; docs/dashboard.md). The points live in two plain arrays in time
// order that grow as feeds arrive and lose what falls out of the window or past MAX_POINTS. The time
// axis is the window itself, ending at the service's clock, whatever the points: every chart of the page
// spans the same time, and shows how long ago its last value came.
import { minuteOfDay, tickLabels, timeOfDay, withUnit } from './format.js';

/** @type {typeof import('uplot')} */
const uPlot = /** @type {any} */ (window).uPlot;

const HEIGHT = 160;
/** The most points one chart keeps: the page asks for at most this many at start (one page of the API). */
export const MAX_POINTS = 10_000;
const INK = '#475569';
/** The axes' font, given to uPlot and used to measure their labels. */
const FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif';
/** Room between two time labels, in CSS pixels. */
const LABEL_GAP = 12;
/** uPlot's room between a value label and the plot: its tick (10) and gap (5). */
const Y_TICK_AND_GAP = 15;
/** The steps between time ticks, in seconds: whole minutes, so that a tick's label needs no seconds. */
const TIME_STEPS = [60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 14400, 21600, 43200, 86400];

const measure = /** @type {CanvasRenderingContext2D} */ (document.createElement('canvas').getContext('2d'));
measure.font = FONT;

/** @param {string} text width in CSS pixels, in the axes' font */
function textWidth(text) {
  return measure.measureText(text).width;
}

// The widest time label: hours 10 to 12 (or 20 to 23), minute 58, morning and afternoon.
const TIME_LABEL_WIDTH = Math.max(...[10, 12, 22, 23].map((hour) => textWidth(minuteOfDay(new Date(2026, 0, 1, hour, 58).getTime()))));

/**
 * The steps between value ticks: 1, 2 and 5 times the powers of ten from a step of `decimals` places up,
 * so that no tick shows more decimals than the values do.
 * @param {number} decimals
 */
function valueSteps(decimals) {
  const steps = [];
  for (let exp = -decimals; exp <= 15; exp++) for (const m of [1, 2, 5]) steps.push(Number((m * 10 ** exp).toFixed(Math.max(0, -exp))));
  return steps;
}

/**
 * The value axis: uPlot's (a tenth more each side, and zero when that reaches it), but around a flat line
 * a hundredth of its value (at least ten of its last places) each side, where uPlot would take the value
 * itself (21.5 on an axis from 0 to 40); [0, 1] with no value. Never past the resource's range, which
 * its values cannot leave: a counter at 0 gets 0 to 10, not -10 to 10, a humidity of 99% no 101%.
 * @param {number} min
 * @param {number} max
 * @param {number} decimals
 * @param {[number, number] | null} bounds the subtype's range; null: none
 * @returns {import('uplot').Range.MinMax}
 */
function valueRange(min, max, decimals, bounds) {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
  const pad = Math.max(10 ** (1 - decimals), Math.abs(max) / 100);
  const [from, to] = max - min >= 10 ** -decimals ? uPlot.rangeNum(min, max, 0.1, true) : [min - pad, max + pad];
  if (bounds === null) return [from, to];
  // A value outside the range (stored before the subtype changed) stays on the axis.
  const low = Math.max(from ?? min, Math.min(bounds[0], min));
  const high = Math.min(to ?? max, Math.max(bounds[1], max));
  // A range of one value (4..4) leaves the pad as it was.
  return low < high ? [low, high] : [from, to];
}

/**
 * The width of the value axis, in CSS pixels, that the charts of one device share: the widest any of
 * them needs, so that a time falls at the same place in each (a chart drawn before a wider one catches
 * up at its next tick, within a second).
 * @typedef {{px: number}} SharedAxis
 */

export class SeriesChart {
  /**
   * @param {HTMLElement} parent
   * @param {'number' | 'boolean'} kind
   * @param {number} decimals places a value shows (format.js decimalsOf)
   * @param {SharedAxis} axis shared with the other charts of the device
   * @param {string | null} [unit] the unit of the values (`°C`), on the value axis and in the readout
   * @param {[number, number] | null} [bounds] the range the values lie in (the subtype's), which the
   *   value axis keeps within; null: none
   */
  constructor(parent, kind, decimals, axis, unit = null, bounds = null) {
    /** @type {number[]} seconds since the epoch */
    this.xs = [];
    /** @type {(number | null)[]} null where a value is not a number */
    this.ys = [];
    /** The window: from, to the service's clock, in seconds since the epoch; none until the first tick. */
    this.fromS = 0;
    this.nowS = 0;
    /** A step chart's state as the window begins (the last value before it); null: not known. */
    /** @type {number | null} */
    this.before = null;
    this.parent = parent;
    this.steps = kind === 'boolean';
    const color = this.steps ? '#047857' : '#1d4ed8';
    this.plot = new uPlot(
      {
        width: width(parent),
        height: HEIGHT,
        // Room for the last time label, centred on its tick, at the right edge.
        padding: [10, Math.ceil(TIME_LABEL_WIDTH / 2) + 2, 0, 0],
        // The readout under the chart while the pointer is over it: the full value, unrounded.
        legend: { show: true, live: true },
        cursor: { drag: { x: false, y: false } },
        scales: {
          // The window, whatever the points (uPlot would widen a single point's range by a day of its unit).
          x: { time: true, range: () => [this.fromS, this.nowS] },
          y: this.steps ? { range: [-0.1, 1.1] } : { range: (_u, min, max) => valueRange(min, max, decimals, bounds) },
        },
        axes: [
          {
            stroke: INK,
            font: FONT,
            incrs: TIME_STEPS,
            // Its tick and gap (15) and one line of labels: uPlot's 50 leave an empty band under them.
            size: 32,
            space: TIME_LABEL_WIDTH + LABEL_GAP,
            values: (_u, splits) => splits.map((s) => minuteOfDay(s * 1000)),
          },
          {
            stroke: INK,
            font: FONT,
            ...(this.steps ? { splits: () => [0, 1] } : { incrs: valueSteps(decimals) }),
            values: (u, splits, _axis, _space, step) =>
              u.data[0].length === 0 ? splits.map(() => null) : tickLabels(splits, step, decimals).map((label) => withUnit(label, unit)),
            // As wide as its widest label, so that a large value is not cut off at the left, and as half a
            // time label at least, so that the first one, centred on its tick, is not either; as wide as
            // the device's other charts need.
            size: (_u, labels) => {
              const widest = Math.max(TIME_LABEL_WIDTH / 2 - Y_TICK_AND_GAP, ...(labels ?? []).map((label) => (label === null ? 0 : textWidth(label))));
              axis.px = Math.max(axis.px, Math.ceil(widest) + Y_TICK_AND_GAP + 4);
              return axis.px;
            },
          },
        ],
        series: [
          { label: 'at', value: (_u, s) => (s === null ? '—' : timeOfDay(s * 1000)) },
          {
            label: 'value',
            value: (_u, v) => (v === null ? '—' : withUnit(String(v), unit)),
            stroke: color,
            width: 1.5,
            fill: this.steps ? 'rgba(4, 120, 87, 0.12)' : undefined,
            paths: this.steps ? uPlot.paths.stepped?.({ align: 1 }) : undefined,
            // No dots on a step chart: two of its points (the window's start, now) are no feed.
            points: this.steps ? { show: false } : undefined,
          },
        ],
      },
      [[], []],
      parent,
    );
    new ResizeObserver(() => this.plot.setSize({ width: width(parent), height: HEIGHT })).observe(parent);
  }

  /**
   * Sets a step chart's state as the window begins: the value of the last feed before it.
   * @param {number | null} value
   */
  startWith(value) {
    this.before = value;
  }

  /**
   * Adds points where their times fall among those shown, and drops those before `oldestS`. Live feeds
   * go after them; a backlog that arrives stamped in the past (docs/interface.md, The sample's age) goes
   * among them. A point goes after those of its second already shown: it arrived after them.
   * @param {number[]} xs seconds since the epoch, in time order
   * @param {(number | null)[]} ys
   * @param {number} oldestS
   * @param {number} nowS the service's clock
   */
  add(xs, ys, oldestS, nowS) {
    const shown = this.xs.length;
    if (xs.length > 0 && (shown === 0 || xs[0] >= this.xs[shown - 1])) {
      this.xs.push(...xs);
      this.ys.push(...ys);
    } else if (xs.length > 0) {
      /** @type {number[]} */
      const mx = [];
      /** @type {(number | null)[]} */
      const my = [];
      let i = 0;
      let j = 0;
      while (i < shown || j < xs.length) {
        if (j === xs.length || (i < shown && this.xs[i] <= xs[j])) {
          mx.push(this.xs[i]);
          my.push(this.ys[i++]);
        } else {
          mx.push(xs[j]);
          my.push(ys[j++]);
        }
      }
      this.xs = mx;
      this.ys = my;
    }
    this.tick(oldestS, nowS);
  }

  /**
   * Moves the window on to the service's clock: the points that left it (or past MAX_POINTS) are dropped,
   * and the axis spans the window again.
   * @param {number} oldestS
   * @param {number} nowS the service's clock
   */
  tick(oldestS, nowS) {
    this.fromS = oldestS;
    this.nowS = nowS;
    let drop = Math.max(0, this.xs.length - MAX_POINTS);
    while (drop < this.xs.length && this.xs[drop] < oldestS) drop++;
    if (drop > 0) {
      this.before = this.ys[drop - 1];
      this.xs.splice(0, drop);
      this.ys.splice(0, drop);
    }
    this.draw();
  }

  clear() {
    this.xs = [];
    this.ys = [];
    this.before = null;
    this.draw();
  }

  // A state holds until it changes: a step chart starts with the state the window begins in and carries
  // its last value on to now. With no point, uPlot leaves the x scale alone: it is set to the window here.
  // data-points is the count of feeds shown; data-held marks a step chart that shows a state but no feed.
  draw() {
    let xs = this.xs;
    let ys = this.ys;
    if (this.steps) {
      if (this.before !== null && (xs.length === 0 || xs[0] > this.fromS)) {
        xs = [this.fromS, ...xs];
        ys = [this.before, ...ys];
      }
      const last = xs.length - 1;
      if (last >= 0 && ys[last] !== null && this.nowS > xs[last]) {
        xs = [...xs, this.nowS];
        ys = [...ys, ys[last]];
      }
    }
    this.plot.setData([xs, ys], false);
    if (this.nowS > this.fromS) this.plot.setScale('x', { min: this.fromS, max: this.nowS });
    this.parent.dataset.points = String(this.xs.length);
    this.parent.toggleAttribute('data-held', this.xs.length === 0 && xs.length > 0);
  }
}

/** @param {HTMLElement} parent */
function width(parent) {
  return Math.max(200, parent.clientWidth);
}
