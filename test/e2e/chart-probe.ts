// What a person sees of the dashboard's charts, read in the page without help from the page: a script that
// runs before the page's own keeps every uPlot chart the page makes and every text drawn on a canvas, with
// its box as the canvas measures it. uPlot draws its tick labels on the canvas, so the boxes are the only
// way to see whether they overlap or fall off the chart.
import type { Page } from 'playwright-core';

/** Installed with page.addInitScript before the page loads (a string: it runs in the page, as is). */
export const CHART_PROBE = `(() => {
  const plots = [];
  let probed;
  // uPlot.iife.min.js declares a global; the setter wraps it as it arrives, so that each chart is kept.
  Object.defineProperty(window, 'uPlot', {
    configurable: true,
    get: () => probed,
    set(real) {
      probed = function (...args) {
        const plot = new real(...args);
        plots.push(plot);
        return plot;
      };
      Object.setPrototypeOf(probed, real);
      probed.prototype = real.prototype;
    },
  });
  const drawn = new WeakMap();
  const proto = CanvasRenderingContext2D.prototype;
  const clearRect = proto.clearRect;
  // uPlot clears the whole canvas before each redraw: what was drawn before is gone.
  proto.clearRect = function (x, y, w, h) {
    if (x <= 0 && y <= 0 && w >= this.canvas.width && h >= this.canvas.height) drawn.set(this.canvas, []);
    return clearRect.call(this, x, y, w, h);
  };
  const fillText = proto.fillText;
  proto.fillText = function (text, x, y, ...rest) {
    const m = this.measureText(text);
    const t = this.getTransform();
    const list = drawn.get(this.canvas) ?? [];
    drawn.set(this.canvas, list);
    // The box in canvas pixels (uPlot draws unrotated labels with a translation at most).
    list.push({
      text: String(text),
      left: t.a * (x - m.actualBoundingBoxLeft) + t.e,
      right: t.a * (x + m.actualBoundingBoxRight) + t.e,
      top: t.d * (y - m.actualBoundingBoxAscent) + t.f,
      bottom: t.d * (y + m.actualBoundingBoxDescent) + t.f,
    });
    return fillText.call(this, text, x, y, ...rest);
  };
  window.__charts = (resource) =>
    plots
      .filter((u) => u.root.isConnected && u.root.closest('.card')?.dataset.resource === String(resource))
      .map((u) => ({
        min: u.scales.x.min,
        max: u.scales.x.max,
        points: u.data[0].length,
        times: u.data[0],
        states: u.data[1],
        plot: { left: u.bbox.left, width: u.bbox.width },
        canvas: { width: u.ctx.canvas.width, height: u.ctx.canvas.height, ratio: u.ctx.canvas.width / u.ctx.canvas.getBoundingClientRect().width },
        labels: drawn.get(u.ctx.canvas) ?? [],
      }));
})();`;

export interface Box {
  text: string;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

export interface ChartSeen {
  /** The x scale, seconds since the epoch. */
  min: number;
  max: number;
  /** Points uPlot was given (a step chart's carried state is one more). */
  points: number;
  /** Their times, seconds since the epoch. */
  times: number[];
  /** The values uPlot was given. */
  states: (number | null)[];
  /** Where the plotting area is across the canvas, in canvas pixels. */
  plot: { left: number; width: number };
  canvas: { width: number; height: number; ratio: number };
  /** Every text drawn in the last redraw: the axes' tick labels. */
  labels: Box[];
}

/** The chart of a resource's card as drawn last; throws when the card has none. */
export async function chartOf(page: Page, resource: number): Promise<ChartSeen> {
  const charts = (await page.evaluate(`window.__charts(${resource})`)) as ChartSeen[];
  if (charts.length !== 1) throw new Error(`resource ${resource}: ${charts.length} charts in the page`);
  return charts[0];
}

/** What is wrong with a chart's labels: pairs that overlap, labels that leave the canvas; [] when none. */
export function labelFaults(chart: ChartSeen): string[] {
  const faults: string[] = [];
  const { labels, canvas } = chart;
  for (const box of labels) {
    if (box.left < 0 || box.top < 0 || box.right > canvas.width || box.bottom > canvas.height) faults.push(`"${box.text}" leaves the canvas`);
  }
  for (let i = 0; i < labels.length; i++) {
    for (let j = i + 1; j < labels.length; j++) {
      const a = labels[i];
      const b = labels[j];
      if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) faults.push(`"${a.text}" overlaps "${b.text}"`);
    }
  }
  return faults;
}
