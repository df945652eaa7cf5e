// @ts-check
// A resource's recent values as a chart: numbers as a line, booleans as a step chart, through uPlot
// (small, fast, made for time series; docs/dashboard.md). The points live in two plain arrays that grow
// as feeds arrive and lose what falls out of the window or past MAX_POINTS.

/** @type {typeof import('uplot')} */
const uPlot = /** @type {any} */ (window).uPlot;

const HEIGHT = 160;
/** The most points one chart keeps: the page asks for at most this many at start (one page of the API). */
export const MAX_POINTS = 10_000;

export class SeriesChart {
  /**
   * @param {HTMLElement} parent
   * @param {'number' | 'boolean'} kind
   */
  constructor(parent, kind) {
    /** @type {number[]} seconds since the epoch */
    this.xs = [];
    /** @type {number[]} */
    this.ys = [];
    this.parent = parent;
    const steps = kind === 'boolean';
    const color = steps ? '#047857' : '#1d4ed8';
    this.plot = new uPlot(
      {
        width: width(parent),
        height: HEIGHT,
        scales: { x: { time: true }, y: steps ? { range: [-0.1, 1.1] } : {} },
        axes: [{ stroke: '#475569' }, { stroke: '#475569', size: 52, ...(steps ? { splits: () => [0, 1] } : {}) }],
        series: [
          { label: 'time' },
          {
            label: 'value',
            stroke: color,
            width: 1.5,
            fill: steps ? 'rgba(4, 120, 87, 0.12)' : undefined,
            paths: steps ? uPlot.paths.stepped?.({ align: 1 }) : undefined,
            points: { show: false },
          },
        ],
      },
      [[], []],
      parent,
    );
    new ResizeObserver(() => this.plot.setSize({ width: width(parent), height: HEIGHT })).observe(parent);
  }

  /** The points now shown. */
  get size() {
    return this.xs.length;
  }

  /**
   * Adds points after the ones shown (feeds arrive in time order) and drops those before `oldest`.
   * @param {number[]} xs seconds since the epoch
   * @param {number[]} ys
   * @param {number} oldest
   */
  append(xs, ys, oldest) {
    this.xs.push(...xs);
    this.ys.push(...ys);
    let drop = Math.max(0, this.xs.length - MAX_POINTS);
    while (drop < this.xs.length && this.xs[drop] < oldest) drop++;
    if (drop > 0) {
      this.xs.splice(0, drop);
      this.ys.splice(0, drop);
    }
    this.plot.setData([this.xs, this.ys]);
    this.parent.dataset.points = String(this.xs.length);
  }

  clear() {
    this.xs = [];
    this.ys = [];
    this.plot.setData([[], []]);
    this.parent.dataset.points = '0';
  }
}

/** @param {HTMLElement} parent */
function width(parent) {
  return Math.max(200, parent.clientWidth);
}
