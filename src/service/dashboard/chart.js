// @ts-check
// A resource's recent values as a chart: numbers as a line, booleans as a step chart, through uPlot
// (small, fast, made for time series; docs/dashboard.md). The points live in two plain arrays that grow
// as feeds arrive and lose what falls out of the window or past MAX_POINTS. The time axis ends at the
// service's clock, so a chart shows how long ago its last value came.

/** @type {typeof import('uplot')} */
const uPlot = /** @type {any} */ (window).uPlot;

const HEIGHT = 160;
/** The most points one chart keeps: the page asks for at most this many at start (one page of the API). */
export const MAX_POINTS = 10_000;
/** The time axis spans at least this many seconds, so that a single point does not stretch it to years. */
const MIN_SPAN_S = 60;

export class SeriesChart {
  /**
   * @param {HTMLElement} parent
   * @param {'number' | 'boolean'} kind
   */
  constructor(parent, kind) {
    /** @type {number[]} seconds since the epoch */
    this.xs = [];
    /** @type {(number | null)[]} null where a value is not a number */
    this.ys = [];
    /** The service's clock, in seconds since the epoch. */
    this.nowS = 0;
    this.parent = parent;
    this.steps = kind === 'boolean';
    const color = this.steps ? '#047857' : '#1d4ed8';
    this.plot = new uPlot(
      {
        width: width(parent),
        height: HEIGHT,
        legend: { show: false },
        scales: {
          x: { time: true, range: (_u, min, max) => [Math.min(min, this.nowS - MIN_SPAN_S), Math.max(max, this.nowS)] },
          y: this.steps ? { range: [-0.1, 1.1] } : {},
        },
        axes: [{ stroke: '#475569' }, { stroke: '#475569', size: 52, ...(this.steps ? { splits: () => [0, 1] } : {}) }],
        series: [
          {},
          {
            stroke: color,
            width: 1.5,
            fill: this.steps ? 'rgba(4, 120, 87, 0.12)' : undefined,
            paths: this.steps ? uPlot.paths.stepped?.({ align: 1 }) : undefined,
          },
        ],
      },
      [[], []],
      parent,
    );
    new ResizeObserver(() => this.plot.setSize({ width: width(parent), height: HEIGHT })).observe(parent);
  }

  /**
   * Adds points after the ones shown (feeds arrive in time order) and drops those before `oldestS`.
   * @param {number[]} xs seconds since the epoch
   * @param {(number | null)[]} ys
   * @param {number} oldestS
   * @param {number} nowS the service's clock
   */
  append(xs, ys, oldestS, nowS) {
    this.xs.push(...xs);
    this.ys.push(...ys);
    this.tick(oldestS, nowS);
  }

  /**
   * Moves the window on to the service's clock: the points that left it (or past MAX_POINTS) are dropped.
   * @param {number} oldestS
   * @param {number} nowS the service's clock
   */
  tick(oldestS, nowS) {
    this.nowS = nowS;
    let drop = Math.max(0, this.xs.length - MAX_POINTS);
    while (drop < this.xs.length && this.xs[drop] < oldestS) drop++;
    if (drop > 0) {
      this.xs.splice(0, drop);
      this.ys.splice(0, drop);
    }
    if (drop > 0 || this.xs.length > 0) this.draw();
    this.parent.dataset.points = String(this.xs.length);
  }

  clear() {
    this.xs = [];
    this.ys = [];
    this.plot.setData([[], []]);
    this.parent.dataset.points = '0';
  }

  // A state holds until it changes: a step chart carries its last value on to now.
  draw() {
    const last = this.xs.length - 1;
    const carry = this.steps && last >= 0 && this.nowS > this.xs[last];
    this.plot.setData(carry ? [[...this.xs, this.nowS], [...this.ys, this.ys[last]]] : [this.xs, this.ys]);
  }
}

/** @param {HTMLElement} parent */
function width(parent) {
  return Math.max(200, parent.clientWidth);
}
