// The dashboard in a real browser (Debian's Chromium through playwright-core), as a user meets it: the
// built CLI's `simulate` (its own service inside) prints the page's URL; the page's charts gain points
// while the simulator runs; a command written from the page reaches the simulator, and a value that breaks
// the restriction shows the service's message; `serve` prints the URL on its second line; names and
// values with markup show as text. At 1280 and 390 px, every chart spans the window chosen whatever its
// points (one, none, minutes, an hour), its tick labels apart and on the canvas, values rounded, and the
// page does not scroll sideways. FEED_AGENT_SCREENSHOTS=1 writes the screenshots into docs/ (else tmp/).
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ACTUATORS, DEMO_PUBLIC_KEY, DEMO_RESOURCES, DEMO_TOKEN, demoFleetDevice } from '../../src/service';
import { createAgent } from '../../src/core';
import { createNodeHost } from '../../platforms/node/host/host';
import { planFor } from '../../platforms/node/sim/plan';
import { createSignal } from '../../platforms/node/sim/signals';
import { SIM_UPLINK } from '../../platforms/node/sim/simulator';
import { demoClient } from '../../bench/demo';
import { FastForward } from '../../bench/fast-forward';
import { FaultProxy } from '../support/fault-proxy';
import type { Seed } from '../../src/service';
import type { FeedPage } from '../../src/service/local-wire';
import { launchChromium } from '../support/chromium';
import type { Chromium } from '../support/chromium';
import { device } from '../support/client';
import { Served } from '../support/serve';
import { CHART_PROBE, chartOf, labelFaults } from './chart-probe';
import type { ChartSeen } from './chart-probe';
import { feedsFile, ROOT, Sim, subtype, withBuiltCli } from './support';

const work = withBuiltCli('e2e-dashboard-');
let browser: Chromium;

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(() => browser?.close());

// How long a page may take to show what is awaited: generous, for a machine under load. Every read in a
// poll below returns at once (allTextContents, evaluateAll), so the poll's own timeout is the one that counts.
const WAIT = { timeout: 20_000 };

/** The points a card's chart (or list) shows: app.js keeps them in data-points; 0 before the card exists. */
async function points(page: Page, resource: number): Promise<number> {
  const all = await page.locator(`.card[data-resource="${resource}"] .plot`).evaluateAll((plots) => plots.map((p: any) => Number(p.dataset.points)));
  return all[0] ?? 0;
}

/** The same pseudo-random walk for the same seed, so that two devices' signals are alike (a 32-bit LCG). */
function seeded(seed: number): () => number {
  let x = seed >>> 0;
  return () => ((x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 4294967296);
}

/** A step chart's state at time `t`: that of its last point at or before `t`. */
function stepAt(chart: ChartSeen, t: number): number | null {
  let j = 0;
  while (j + 1 < chart.points && chart.times[j + 1] <= t) j++;
  return chart.states[j];
}

/** A line chart's value at time `t`, between its points. */
function lineAt(chart: ChartSeen, t: number): number {
  let j = 1;
  while (j < chart.points - 1 && chart.times[j] < t) j++;
  const [t0, t1] = [chart.times[j - 1], chart.times[j]];
  const [v0, v1] = [chart.states[j - 1] as number, chart.states[j] as number];
  return t1 === t0 ? v1 : v0 + ((v1 - v0) * (t - t0)) / (t1 - t0);
}

async function screenshot(page: Page, name: string): Promise<void> {
  const file = join(work.dir, name);
  await page.screenshot({ path: file, fullPage: true });
  if (process.env.FEED_AGENT_SCREENSHOTS === '1') copyFileSync(file, join(ROOT, 'docs', name));
}

describe('the dashboard in Chromium', () => {
  it('shows the simulated device live, in a window that fits it, and a command written on the page reaches the simulator', { timeout: 120_000 }, async () => {
    const sim = new Sim(work.cli(), ['--json']);
    const start = await sim.next((e) => e.type === 'start');
    expect(start.dashboard).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.addInitScript(CHART_PROBE);
    await page.goto(start.dashboard);

    await expect.poll(() => page.locator('.device-head h2').allTextContents(), WAIT).toEqual(['Demo Greenhouse Controller']);
    // One device: no pager.
    expect(await page.locator('#pager').isHidden()).toBe(true);
    // A fresh demo's seconds of data: the smallest window, 10 minutes, which the URL gets only when chosen.
    await expect.poll(() => page.locator('#window').inputValue(), WAIT).toBe('10m');
    expect(new URL(page.url()).search).toBe('');
    await expect.poll(() => points(page, 102), WAIT).toBeGreaterThan(0);
    expect((await chartOf(page, 102)).max - (await chartOf(page, 102)).min).toBe(600);
    const before = await points(page, 102);
    // Live: more points arrive while the page stays open, drawn by uPlot on a canvas.
    await expect.poll(() => points(page, 102), WAIT).toBeGreaterThan(before);
    expect(await page.locator('.card[data-resource="102"] canvas').count()).toBeGreaterThan(0);
    await expect.poll(() => page.locator('.card[data-resource="102"] .presence').allTextContents(), WAIT).toEqual(['alive']);
    // The device as a whole: online, when it was last heard from, how many of its resources are alive.
    await expect.poll(() => page.locator('.device-status').allTextContents(), WAIT).toEqual([expect.stringMatching(/^online · last seen \d\d?:\d\d:\d\d.* · 8 of 8 resources alive$/)]);

    // Units where the subtype names one: the temperature ("Degrees Celsius") in °C, on its value and its
    // axis; the humidity ("Relative humidity, %") in %; the counter with none.
    const lastValue = (id: number) => page.locator(`.card[data-resource="${id}"] .facts .value`).first().textContent();
    expect(await lastValue(102)).toMatch(/^-?\d+(\.\d)?\u00a0°C$/);
    expect(await lastValue(103)).toMatch(/^\d+(\.\d)?%$/);
    expect(await lastValue(105)).toMatch(/^[\d,]+$/);
    const axis = valueLabels(await chartOf(page, 102));
    expect(axis.length).toBeGreaterThan(0);
    for (const label of axis) expect(label).toMatch(/^-?\d+(\.\d)?\u00a0°C$/);

    // Only the actuators (the demo's command_types) offer writes: the relay a switch, the setpoint a field.
    const writable = () => page.locator('.card:has(form.write)').evaluateAll((cards) => cards.map((c: any) => c.dataset.resource));
    expect(await writable()).toEqual(['107', '108']);
    expect(await page.locator('.card[data-resource="102"] :is(input, button)').count()).toBe(0);

    // The relay's first poll only notes the current state; a command is a feed written after it. The
    // card shows the resource's requests: the start-up lookup, then a poll.
    const relay = page.locator('.card[data-resource="107"]');
    const toggle = relay.getByRole('switch', { name: 'Irrigation Relay' });
    const switchShows = async () => [await toggle.getAttribute('aria-checked'), await relay.locator('.switch-state').textContent()];
    expect(await switchShows()).toEqual(['false', 'no command yet']);
    // Before a command, the relay is listening, not "alive" beside an empty value: the device polls it.
    const presence = (id: number) => page.locator(`.card[data-resource="${id}"] .presence`).textContent();
    expect([await presence(107), await lastValue(107)]).toEqual(['listening', 'no command yet']);
    // The fan, which the simulator only looked up (no signal for its on|off pattern), has sent no value:
    // alive by the service's count, shown as what it is.
    expect([await presence(106), await lastValue(106)]).toEqual(['no value', 'none yet']);
    expect(await page.locator('.card[data-resource="106"] .presence').getAttribute('title')).toMatch(/^alive by the service, .* it has sent no value \(lifetime 15 min\); last heard from at /);
    // The network line says what it counts: bytes sent and received, the term's tooltip whose.
    const network = page.locator('.card[data-resource="102"] dd').nth(2);
    expect(await network.locator('small').textContent()).toMatch(/^[\d,]+ sent · [\d,]+ received$/);
    expect(await page.locator('.card[data-resource="102"] dt', { hasText: 'network' }).getAttribute('title')).toMatch(/sent by the device .* received in the service's answers/);
    const requests = async () => Number((await relay.locator('dd .value').allTextContents())[1]?.replace(/,/g, ''));
    await expect.poll(requests, WAIT).toBeGreaterThanOrEqual(2);
    const feedOf = async () => Number((await relay.locator('.message').textContent())!.split(' ').pop());
    await toggle.click();
    await expect.poll(async () => (await relay.locator('.message').allTextContents())[0], WAIT).toMatch(/^stored 1 as feed \d+$/);
    const on = await feedOf();
    expect(await sim.next((e) => e.type === 'command' && e.resource === 107, 15_000)).toMatchObject({ value: true, feed: on });
    await expect.poll(switchShows, WAIT).toEqual(['true', 'on']);
    await expect.poll(() => lastValue(107), WAIT).toBe('1');
    expect(await presence(107)).toBe('listening');
    // Off again: the switch shows the relay's last value, which the next poll confirms.
    await toggle.click();
    await expect.poll(async () => (await relay.locator('.message').allTextContents())[0], WAIT).toMatch(/^stored 0 as feed \d+$/);
    const off = await feedOf();
    expect(await sim.next((e) => e.type === 'command' && e.resource === 107 && e.feed === off, 15_000)).toMatchObject({ value: false });
    await expect.poll(() => lastValue(107), WAIT).toBe('0');
    expect(await switchShows()).toEqual(['false', 'off']);
    await expect.poll(() => points(page, 107), WAIT).toBe(2);

    // A value the setpoint's subtype refuses: the service's own message, next to the control; then one it takes.
    const setpoint = page.locator('.card[data-resource="108"]');
    await setpoint.locator('input[name="value"]').fill('40');
    await setpoint.getByRole('button', { name: 'Write' }).click();
    await expect.poll(() => setpoint.locator('.message.error').allTextContents(), WAIT).toEqual(['resource 108: value 40 is outside [5, 35]']);
    await setpoint.locator('input[name="value"]').fill('18.5');
    await setpoint.locator('input[name="value"]').press('Enter');
    await expect.poll(() => setpoint.locator('.message.ok').allTextContents(), WAIT).toEqual([expect.stringMatching(/^stored 18\.5 as feed \d+$/)]);
    await expect.poll(() => lastValue(108), WAIT).toBe('18.5\u00a0°C');

    // The window's feeds as CSV, from the service: the temperature chart's, in time order, from the
    // window's start on; the same feeds the local API gives for that range.
    const link = page.locator('.card[data-resource="102"] a.csv');
    const from = new URL((await link.getAttribute('href'))!, page.url()).searchParams.get('from')!;
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).toBe('resource-102-feeds.csv');
    const [header, ...rows] = readFileSync((await download.path())!, 'utf8').trimEnd().split('\r\n');
    expect(header).toBe('id_resource_feed,created_at,raw_data');
    expect(rows.length).toBeGreaterThanOrEqual(before);
    const api = (await (await fetch(`${start.url}/_local/resources/102/feeds?${new URLSearchParams({ from, limit: '10000' })}`)).json()) as { payload: FeedPage };
    const { id_resource_feed: ids, created_at: at, raw_data: raw } = api.payload;
    expect(rows).toEqual(ids.slice(0, rows.length).map((id, i) => `${id},${at[i]},${raw[i]}`));
    expect(at[0] >= from).toBe(true);

    // A window chosen goes into the URL, and a reload keeps it.
    await page.locator('#window').selectOption('1h');
    expect(new URL(page.url()).searchParams.get('window')).toBe('1h');
    await page.reload();
    await expect.poll(() => chartOf(page, 102).then((c) => c.max - c.min), WAIT).toBe(3600);
    expect(await page.locator('#window').inputValue()).toBe('1h');
    // No token on the page: not in what it shows, nor in the CSV.
    expect(await page.content()).not.toContain(DEMO_TOKEN);

    // Enough points for screenshots that show the charts' shapes, in the shortest window, at both widths.
    await page.locator('#window').selectOption('10m');
    await expect.poll(() => points(page, 102), { timeout: 40_000 }).toBeGreaterThanOrEqual(20);
    await screenshot(page, 'dashboard.png');
    await page.setViewportSize({ width: 390, height: 900 });
    await expect.poll(() => page.evaluate('document.documentElement.scrollWidth - window.innerWidth'), WAIT).toBeLessThanOrEqual(0);
    await page.waitForTimeout(1_500);
    await screenshot(page, 'dashboard-390.png');
    expect(errors).toEqual([]);

    sim.kill('SIGINT');
    expect(await sim.exited).toBe(0);
  });

  it('shows a fleet ten devices at a time, and its pager moves through them', { timeout: 60_000 }, async () => {
    const served = await Served.start(work.cli(), ['--port', '0', '--demo-devices', '25']);
    try {
      const page = await browser.context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${served.url}/`);
      const keys = () => page.locator('.device-head code').allTextContents();
      const fleet = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => demoFleetDevice(from + k).publicKey);
      const shown = () => page.locator('#pager #shown').allTextContents();
      await expect.poll(keys, WAIT).toEqual(fleet(0, 10));
      expect(await shown()).toEqual(['devices 1–10 of 25']);
      expect(await page.locator('.card').count()).toBe(80);
      const previous = page.getByRole('button', { name: 'previous devices' });
      const next = page.getByRole('button', { name: 'next devices' });
      expect(await previous.isDisabled()).toBe(true);
      await next.click();
      await expect.poll(keys, WAIT).toEqual(fleet(10, 20));
      await next.click();
      await expect.poll(keys, WAIT).toEqual(fleet(20, 25));
      expect(await shown()).toEqual(['devices 21–25 of 25']);
      expect(await next.isDisabled()).toBe(true);
      expect(await page.locator('.card').count()).toBe(40);
      await previous.click();
      await expect.poll(keys, WAIT).toEqual(fleet(10, 20));
      expect(errors).toEqual([]);
    } finally {
      await served.stop();
    }
  });

  it('a chart drops the points that left its window as time passes, with no new feed', { timeout: 30_000 }, async () => {
    const served = await Served.start(work.cli(), ['--port', '0']);
    try {
      const page = await browser.context.newPage();
      await page.goto(`${served.url}/`);
      // The page's own chart module, on a chart of its own: three points, then the window moves past two.
      // A string, so that the test's transform leaves the page's import() alone.
      const counts = await page.evaluate(`(async () => {
        const { SeriesChart } = await import('/_local/assets/chart.js');
        const parent = document.body.appendChild(document.createElement('div'));
        const chart = new SeriesChart(parent, 'number', 1, { px: 0 });
        chart.add([100, 200, 300], [1, 2, 3], 0, 300);
        const before = [chart.xs.length, parent.dataset.points];
        chart.tick(250, 400);
        const after = [chart.xs.length, parent.dataset.points];
        chart.tick(350, 500);
        return [before, after, [chart.xs.length, parent.dataset.points]];
      })()`);
      expect(counts).toEqual([[3, '3'], [1, '1'], [0, '0']]);
    } finally {
      await served.stop();
    }
  });

  it("a value axis stays within the resource's range: a counter at 0 from 0, not from -10", { timeout: 30_000 }, async () => {
    const served = await Served.start(work.cli(), ['--port', '0']);
    try {
      const page = await browser.context.newPage();
      await page.goto(`${served.url}/`);
      const axes = await page.evaluate(`(async () => {
        const { SeriesChart } = await import('/_local/assets/chart.js');
        const chart = (decimals, bounds, ys) => {
          const made = new SeriesChart(document.body.appendChild(document.createElement('div')), 'number', decimals, { px: 0 }, null, bounds);
          made.add(ys.map((_, i) => 100 + i), ys, 0, 200);
          return made;
        };
        const charts = [
          chart(0, [0, 2147483647], [0]),
          chart(0, null, [0]),
          chart(1, [0, 100], [99.5, 100]),
          chart(1, [-40, 125], [21.5]),
          chart(0, [4, 4], [4]),
        ];
        // uPlot sets its scales once the frame is drawn.
        await new Promise(requestAnimationFrame);
        return charts.map((c) => [c.plot.scales.y.min, c.plot.scales.y.max]);
      })()`);
      expect(axes).toEqual([
        // A counter's first reading: the pad below 0, which no reading can reach, is gone.
        [0, 10],
        // Without a range the pad stays on both sides.
        [-10, 10],
        // A humidity near full: up to 100 %, no further.
        [expect.closeTo(99.45, 5), 100],
        // Well inside the range, as before: ten of its last places (or a hundredth of the value) each side.
        [20.5, 22.5],
        // A range of one value keeps the pad (the line would be on the axis' edge).
        [-6, 14],
      ]);
    } finally {
      await served.stop();
    }
  });

  it('a chart puts points stamped before those it shows among them, in time order', { timeout: 30_000 }, async () => {
    const served = await Served.start(work.cli(), ['--port', '0']);
    try {
      const page = await browser.context.newPage();
      await page.goto(`${served.url}/`);
      const shown = await page.evaluate(`(async () => {
        const { SeriesChart } = await import('/_local/assets/chart.js');
        const chart = new SeriesChart(document.body.appendChild(document.createElement('div')), 'number', 1, { px: 0 });
        chart.add([100, 200, 300], [1, 2, 3], 0, 400);
        // Stored later, sampled earlier: a second's new point goes after the one shown of that second.
        chart.add([50, 200, 250], [4, 5, 6], 0, 400);
        chart.add([350], [7], 0, 400);
        return [chart.xs, chart.ys];
      })()`);
      expect(shown).toEqual([
        [50, 100, 200, 200, 250, 300, 350],
        [4, 1, 2, 5, 6, 3, 7],
      ]);
    } finally {
      await served.stop();
    }
  });

  it('a backlog stored after the points a chart shows, sampled before them, is drawn where it was sampled', { timeout: 60_000 }, async () => {
    const served = await Served.start(work.cli(), ['--port', '0']);
    try {
      const api = device(served.url, DEMO_PUBLIC_KEY, DEMO_TOKEN);
      const minute = 60_000;
      const created = async (body: object[]) => {
        const reply = await api.createFeeds(body);
        expect(reply.status, reply.text).toBe(200);
        return (reply.json.payload as { created_at: string }[]).map((f) => Date.parse(f.created_at.replace(' ', 'T') + 'Z') / 1000);
      };
      const temperature = (age: number | undefined, i: number) => ({ id_resource: 102, input: 20 + 3 * Math.sin(i / 6), ...(age !== undefined && { age_ms: age }) });
      // Before the outage: 21 samples a minute apart, 55 to 35 minutes ago; the door closed two hours ago.
      // (The times stored, seconds since the epoch, of the temperature's feeds only.)
      const times = (await created([...Array.from({ length: 21 }, (_, i) => temperature((55 - i) * minute, i)), { id_resource: 101, input: 0, age_ms: 120 * minute }])).slice(0, 21);
      const page = await browser.context.newPage();
      await page.addInitScript(CHART_PROBE);
      await page.goto(`${served.url}/?window=1h`);
      await expect.poll(async () => (await chartOf(page, 102)).points, WAIT).toBe(21);
      expect((await chartOf(page, 101)).states).toEqual([0, 0]);
      // The device restarts after the outage. Its restored samples have no age on this boot's clock: they
      // are stamped on arrival, and shown.
      times.push(...(await created([0, 1, 2].map((i) => temperature(undefined, 21 + i)))));
      await expect.poll(async () => (await chartOf(page, 102)).points, WAIT).toBe(24);
      // Then what it sampled since it restarted, with ages, stamped before them; and the door's opening,
      // sampled 70 minutes ago, before the window: the window begins with it open.
      times.push(...(await created([...Array.from({ length: 34 }, (_, i) => temperature((34 - i) * minute, 24 + i)), { id_resource: 101, input: 1, age_ms: 70 * minute }])).slice(0, 34));
      await expect.poll(async () => (await chartOf(page, 102)).points, WAIT).toBe(58);
      expect((await chartOf(page, 102)).times).toEqual(times.slice(0, 21).concat(times.slice(24), times.slice(21, 24)));
      await expect.poll(async () => (await chartOf(page, 101)).states, WAIT).toEqual([1, 1]);
      await screenshot(page, 'dashboard-backlog.png');
    } finally {
      await served.stop();
    }
  });

  it('report by exception draws the same curves as every sample: the door contact and the water meter, an hour of each', { timeout: 120_000 }, async () => {
    const served = await Served.start(work.cli(), ['--port', '0', '--demo-devices', '2']);
    try {
      // Two demo devices, the same signals on one fast-forward clock: the first with the demo's report
      // rules, the second sending every sample. The service refuses every batch for 55 minutes of device
      // time (a 503 at the proxy), then takes them: with ages, each feed is stored at its sample's time, so
      // the backlog spreads over the last hour.
      const proxy = await FaultProxy.start(served.url);
      proxy.faults([{ op: 'create', always: true, action: { do: 'status', status: 503 } }]);
      const ff = new FastForward(createNodeHost());
      const resources = await demoClient(served.url, ff.host.request).getResources(DEMO_RESOURCES);
      const agents = [true, false].map((rules, k) => {
        const d = demoFleetDevice(k);
        const id = (resource: number): number => d.resources[DEMO_RESOURCES.indexOf(resource)];
        const plan = planFor(resources, DEMO_ACTUATORS, rules);
        return createAgent(ff.host, {
          url: proxy.url,
          publicKey: d.publicKey,
          token: d.token,
          sensors: plan.sensors.map((s) => ({ resource: id(s.resource), every: s.every, read: createSignal(s.spec, { now: ff.now, random: seeded(s.resource) }) })),
          reporting: plan.sensors.flatMap((s) => (s.report === undefined ? [] : [{ resource: id(s.resource), ...s.report }])),
          uplink: { ...SIM_UPLINK, sendAge: true, queue: 20_000 },
          seed: 1,
        });
      });
      try {
        await Promise.all(agents.map((a) => a.start()));
        await ff.run(55 * 60_000);
        proxy.clearFaults();
        const flushed = Promise.all(agents.map((a) => a.flush()));
        await ff.run(60_000);
        expect(await flushed).toEqual([true, true]);
        const [ruled] = await Promise.all(agents.map((a) => a.stop()));
        expect(ruled.heldBack).toBeGreaterThan(0);
      } finally {
        await proxy.close();
      }
      const page = await browser.context.newPage();
      await page.addInitScript(CHART_PROBE);
      await page.goto(`${served.url}/?window=1h`);
      const other = demoFleetDevice(1).resources;
      for (const [resource, all] of [[101, other[0]], [105, other[4]]]) {
        await expect.poll(async () => (await chartOf(page, resource)).points, WAIT).toBeGreaterThan(1);
        await expect.poll(async () => (await chartOf(page, all)).points, WAIT).toBeGreaterThan(3000);
      }
      // The contact: the step the rules' few points draw gives the state of every sample at its time, to
      // within a second. Times are stored to the second, as arrival minus age, and the two devices' batches
      // arrive at different instants, so the same change can be stamped a second apart on each: 43 and 45
      // samples of 3,361 fell there in runs alone, 68 in two CI runs of the whole suite; none further.
      const contact = await chartOf(page, 101);
      const contactAll = await chartOf(page, other[0]);
      const wrong = contactAll.times.filter((t, i) => [t - 1, t, t + 1].every((u) => stepAt(contact, u) !== contactAll.states[i])).length;
      expect(wrong).toBeLessThanOrEqual(contactAll.points / 50);
      // The meter's total: the line through the rules' points stays within a minute's count (60) of every sample.
      const meter = await chartOf(page, 105);
      const meterAll = await chartOf(page, other[4]);
      const first = meter.times[0], last = meter.times[meter.points - 1];
      const off = meterAll.times.map((t, i) => (t < first || t > last ? 0 : Math.abs(lineAt(meter, t) - (meterAll.states[i] as number))));
      expect(Math.max(...off)).toBeLessThanOrEqual(60);
      // Drawn from a twentieth of the points or fewer.
      expect(meter.points + contact.points).toBeLessThan((meterAll.points + contactAll.points) / 20);
      await screenshot(page, 'dashboard-exception.png');
    } finally {
      await served.stop();
    }
  });

  it('serve prints the URL after "listening on"; names and values with markup show as text', { timeout: 60_000 }, async () => {
    const NAME = '<img src=x onerror="document.body.dataset.pwned=1">Pump <b>2</b>';
    const VALUE = '<script>document.body.dataset.pwned=2</script><i>dry</i>';
    const seed = {
      subtypes: [{ id_resource_subtype: 1, id_resource_type: 1, name: 'Text', data_restriction_regex: '.*', data_restriction_begin_range: 0, data_restriction_end_range: 0 }],
      devices: [{ public_key: 'MARKUP', token: 'markup-token', name: '<h1>Device</h1>', resources: [{ id_resource: 1, id_resource_subtype: 1, name: NAME, lifetime: 5 }] }],
    };
    const seedFile = join(work.dir, 'markup.json');
    writeFileSync(seedFile, JSON.stringify(seed));
    const served = await Served.start(work.cli(), ['--port', '0', '--seed', seedFile]);
    try {
      const url = served.url;
      expect(await served.line(/^dashboard /)).toBe(`dashboard ${url}/`);
      expect(served.output().split('\n')[1]).toBe(`dashboard ${url}/`);
      const write = (input: string) => device(url, 'MARKUP', 'markup-token').createFeed(1, input);
      expect((await write(VALUE)).status).toBe(200);

      const page = await browser.context.newPage();
      // The feeds the page asks for: a list of ten asks for ten, not for a chart's page.
      const asked: URL[] = [];
      page.on('request', (r) => r.url().includes('/feeds') && asked.push(new URL(r.url())));
      await page.goto(`${url}/`);
      const card = page.locator('.card[data-resource="1"]');
      await expect.poll(() => card.locator('h3').allTextContents(), WAIT).toEqual([NAME]);
      await expect.poll(() => page.locator('.device-head h2').allTextContents(), WAIT).toEqual(['<h1>Device</h1>']);
      await expect.poll(() => card.locator('.values li .value').allTextContents(), WAIT).toEqual([VALUE]);
      expect((await card.locator('.facts .value').allTextContents())[0]).toBe(VALUE);
      expect(await page.locator('main img, main script, main b, main i, main h1').count()).toBe(0);
      expect(await page.evaluate('document.body.dataset.pwned')).toBeUndefined();
      // A new value goes on top of the list; the page asked for no more than the list shows.
      expect((await write('later')).status).toBe(200);
      await expect.poll(() => card.locator('.values li .value').allTextContents(), WAIT).toEqual(['later', VALUE]);
      // (The first feed's lookup, which picks the window, asks for one.)
      const listed = asked.filter((u) => u.searchParams.get('order') === 'desc');
      expect(listed.length).toBeGreaterThanOrEqual(2);
      for (const u of listed) expect(u.searchParams.get('limit'), u.search).toBe('10');
      expect(asked.filter((u) => u.searchParams.get('order') === 'asc').map((u) => u.searchParams.get('limit'))).toEqual(['1']);
      await screenshot(page, 'dashboard-markup.png');
    } finally {
      await served.stop();
    }
  });
});


// A device whose charts each show a case of their own, fed in the past through a database file: one
// point, three minutes of a temperature whose last value is a float's noise, an hour of humidity, a
// door's hour of states, an hour of a counter in the billions, and no feed at all; and a fan, an on/off
// actuator. Its oldest feeds are 59 minutes old: the page opens on the hour. It was last heard from two
// hours ago (its presence, set in the file), so it is offline.
const CHART_DEVICE = { key: 'CHARTS', token: 'charts-token' };
const ONE_POINT = 1;
const MINUTES = 2;
const HOUR = 3;
const DOOR = 4;
const COUNTER = 5;
const NOTHING = 6;
const FAN = 7;
const CHARTS = [ONE_POINT, MINUTES, HOUR, DOOR, COUNTER, NOTHING];
const NOISY = '21.100000000000016';
/** When the chart device was last heard from: two hours before the test's now, past every lifetime. */
const LAST_HEARD = (nowMs: number) => nowMs - 2 * 3600_000;
const CHART_SEED: Seed = {
  subtypes: [
    subtype(3, 1, 'Binary', 0, 1),
    { ...subtype(5, 1, 'Temperature', -40, 125), description: 'Degrees Celsius' },
    subtype(6, 1, 'Humidity', 0, 100),
    subtype(8, 1, 'Counter', 0, 2147483647),
    { ...subtype(9, 2, 'On/Off', 0, 1), data_restriction_regex: 'on|off' },
  ],
  command_types: [2],
  devices: [
    {
      public_key: CHART_DEVICE.key,
      token: CHART_DEVICE.token,
      name: 'Chart Device',
      resources: (
        [
          [ONE_POINT, 5, 'One Reading'],
          [MINUTES, 5, 'Three Minutes'],
          [HOUR, 6, 'An Hour'],
          [DOOR, 3, 'Door'],
          [COUNTER, 8, 'Water Meter'],
          [NOTHING, 5, 'No Reading Yet'],
          [FAN, 9, 'Fan'],
        ] as const
      ).map(([id, sub, name]) => ({ id_resource: id, id_resource_subtype: sub, name, description: '', lifetime: 60 })),
    },
  ],
};

/** The feeds of CHART_SEED, up to `nowMs`. */
function chartFeeds(nowMs: number) {
  const feeds: { resource: number; value: string; atMs: number }[] = [];
  const s = 1000;
  for (let t = 3540; t > 0; t -= 20) feeds.push({ resource: HOUR, value: String(55 + 10 * Math.sin(t / 600)), atMs: nowMs - t * s });
  // The door's last change, to open, is 15 minutes old: the window of 10 minutes begins with it open.
  for (let t = 3300, open = 1; t >= 900; t -= 600, open = 1 - open) feeds.push({ resource: DOOR, value: String(open), atMs: nowMs - t * s });
  for (let t = 3540; t > 0; t -= 60) feeds.push({ resource: COUNTER, value: String(1_234_000_000 + (3600 - t) * 12_345), atMs: nowMs - t * s });
  feeds.push({ resource: FAN, value: 'on', atMs: nowMs - 120 * s });
  // 20.1, 20.2… as a float sums them: 20.200000000000003 and the like.
  let value = 20;
  for (let t = 180; t > 5; t -= 5) feeds.push({ resource: MINUTES, value: String((value += 0.1 * Math.sign(Math.sin(t / 30) + 0.5))), atMs: nowMs - t * s });
  feeds.push({ resource: MINUTES, value: NOISY, atMs: nowMs - 5 * s });
  feeds.push({ resource: ONE_POINT, value: '21.5', atMs: nowMs - 30 * s });
  return feeds.sort((a, b) => a.atMs - b.atMs);
}

describe("the dashboard's charts", () => {
  let started = 0;
  /** `serve` of CHART_SEED, in a database of its own fed up to now. */
  function chartService(): Promise<Served> {
    const db = join(work.dir, `charts-${++started}.db`);
    const seedFile = join(work.dir, 'charts.json');
    writeFileSync(seedFile, JSON.stringify(CHART_SEED));
    const nowMs = Date.now();
    feedsFile(db, CHART_SEED, chartFeeds(nowMs));
    const file = new Database(db);
    file.prepare('UPDATE resources SET lifetime_updated_at = ?').run(LAST_HEARD(nowMs));
    file.close();
    return Served.start(work.cli(), ['--port', '0', '--seed', seedFile, '--db', db]);
  }

  async function open(served: Served, width: number, query = ''): Promise<Page> {
    const page = await browser.context.newPage();
    await page.setViewportSize({ width, height: 900 });
    await page.addInitScript(CHART_PROBE);
    await page.goto(`${served.url}/${query}`);
    await page.waitForFunction(() => (globalThis as any).document.body.dataset.ready === 'true', undefined, WAIT);
    return page;
  }

  for (const width of [1280, 390]) {
    it(`at ${width} px, a chart of one point spans the hour chosen, ending now`, { timeout: 30_000 }, async () => {
      const served = await chartService();
      try {
        const page = await open(served, width);
        await expect.poll(async () => (await chartOf(page, ONE_POINT)).points, WAIT).toBe(1);
        // Feeds from 59 minutes ago: the smallest window that holds them is the hour.
        expect(await page.locator('#window').inputValue()).toBe('1h');
        const chart = await chartOf(page, ONE_POINT);
        expect(chart.max - chart.min).toBe(3600);
        expect(Math.abs(chart.max - Date.now() / 1000)).toBeLessThan(5);
        expect(labelFaults(chart)).toEqual([]);
        await page.close();
        // A link that names a window opens on it; one that names no window of the page opens as without.
        for (const [query, choice, seconds] of [['?window=24h', '24h', 86_400], ['?window=2d', '1h', 3600]] as const) {
          const shared = await open(served, width, query);
          expect(await shared.locator('#window').inputValue(), query).toBe(choice);
          await expect.poll(() => chartOf(shared, ONE_POINT).then((c) => c.max - c.min), WAIT).toBe(seconds);
          await shared.close();
        }
      } finally {
        await served.stop();
      }
    });

    it(`at ${width} px, every chart spans the window chosen, ending now; labels apart; values rounded; no sideways scroll`, { timeout: 60_000 }, async () => {
      const served = await chartService();
      try {
        const page = await open(served, width);
        const status = (await page.locator('#status').textContent())!.replace(/^live · updated /, '');
        for (const [choice, seconds] of [['1h', 3600], ['24h', 86_400], ['10m', 600]] as const) {
          if (choice !== '1h') {
            await page.locator('#window').selectOption(choice);
            expect(new URL(page.url()).searchParams.get('window')).toBe(choice);
          }
          // Every chart, with points or none, spans the window and ends now: all of them the same time, at
          // the same place across their cards (one width of value axis for the device's charts).
          const spans = async () => {
            const charts = await Promise.all(CHARTS.map((id) => chartOf(page, id)));
            const [first] = charts;
            return charts.map((c) => [c.max - c.min, c.max === first.max, Math.abs(c.max - Date.now() / 1000) < 5, c.plot.left === first.plot.left && c.plot.width === first.plot.width]);
          };
          await expect.poll(spans, WAIT).toEqual(CHARTS.map(() => [seconds, true, true, true]));
          // …once the window's feeds are in.
          await expect.poll(() => chartOf(page, ONE_POINT).then((c) => c.points), WAIT).toBe(1);
          for (const id of CHARTS) {
            const chart = await chartOf(page, id);
            expect(labelFaults(chart), `resource ${id}, window ${seconds} s`).toEqual([]);
            const times = timeLabels(chart);
            expect(times.length, `resource ${id}: ${chart.labels.map((l) => l.text)}`).toBeGreaterThanOrEqual(2);
            // One time format on the page: the axis's is the status line's without the seconds.
            for (const t of times) expect(shape(t.text)).toBe(shape(status).replace(/:9(?=\D*$)/, ''));
          }
          if (choice === '1h') await screenshot(page, width === 1280 ? 'dashboard-charts.png' : 'dashboard-charts-390.png');
        }
        // The door's chart holds the state it was left in, open, across the 10 minutes with no feed.
        const door = page.locator(`.card[data-resource="${DOOR}"] .plot`);
        expect([await door.getAttribute('data-points'), await door.getAttribute('data-held')]).toEqual(['0', '']);
        expect((await chartOf(page, DOOR)).states).toEqual([1, 1]);
        // Values shown rounded as the subtype suggests (a tenth for -40..125; a counter's axis in short
        // form, 1.2345B), the full value in the tooltip and in the chart's readout under the pointer (at
        // its right edge, in the window of 10 minutes, the last point is the nearest).
        const minutes = page.locator(`.card[data-resource="${MINUTES}"]`);
        const last = minutes.locator('.facts .value').first();
        expect(await last.textContent()).toBe('21.1\u00a0°C');
        expect(await last.getAttribute('title')).toBe(NOISY + '\u00a0°C');
        for (const label of valueLabels(await chartOf(page, MINUTES))) expect(label).toMatch(/^-?\d+(\.\d)?\u00a0°C$/);
        for (const label of valueLabels(await chartOf(page, COUNTER))) expect(label).toMatch(/^1\.\d+B$/);
        const over = (await minutes.locator('.u-over').boundingBox())!;
        await page.mouse.move(over.x + over.width - 1, over.y + over.height / 2);
        await expect.poll(() => minutes.locator('.u-legend .u-value').allTextContents(), WAIT).toEqual([expect.any(String), NOISY + '\u00a0°C']);
        // Nothing wider than the window: no sideways scroll.
        expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(0);
        // The device as a whole: heard from two hours ago, past every lifetime, so offline; the date shows
        // only when that was another day.
        expect(await page.locator('.device-status').textContent()).toMatch(/^offline · last seen (\D+ \d+, \d{4}, )?\d\d?:\d\d:\d\d.* · 0 of 7 resources alive$/);

        // The fan, an on/off actuator, is the only card that offers a write: a switch that shows its last
        // value, on, and writes the other word.
        const writable = await page.locator('.card:has(form.write)').evaluateAll((cards) => cards.map((c: any) => Number(c.dataset.resource)));
        expect(writable).toEqual([FAN]);
        const fan = page.locator(`.card[data-resource="${FAN}"]`);
        const fanSwitch = fan.getByRole('switch', { name: 'Fan' });
        const fanShows = async () => [await fanSwitch.getAttribute('aria-checked'), await fan.locator('.switch-state').textContent()];
        expect(await fanShows()).toEqual(['true', 'on']);
        await fanSwitch.click();
        await expect.poll(() => fan.locator('.message').allTextContents(), WAIT).toEqual([expect.stringMatching(/^stored "off" as feed \d+$/)]);
        await expect.poll(() => fan.locator('ol.values li .value').allTextContents(), WAIT).toEqual(['off', 'on']);
        expect(await fanShows()).toEqual(['false', 'off']);

        // A reload keeps the window chosen last, which the URL holds.
        await page.reload();
        await page.waitForFunction(() => (globalThis as any).document.body.dataset.ready === 'true', undefined, WAIT);
        expect(await page.locator('#window').inputValue()).toBe('10m');
        await expect.poll(() => chartOf(page, ONE_POINT).then((c) => c.max - c.min), WAIT).toBe(600);
        await page.close();
      } finally {
        await served.stop();
      }
    });
  }
});

/** The labels of a chart's time axis: those with a time in them. */
function timeLabels(chart: ChartSeen) {
  return chart.labels.filter((l) => /\d:\d\d/.test(l.text));
}

/** The labels of a chart's value axis. */
function valueLabels(chart: ChartSeen): string[] {
  return chart.labels.filter((l) => !/\d:\d\d/.test(l.text)).map((l) => l.text);
}

/** A time's form, digits and morning or afternoon aside: `6:11:05 PM` is `9:9:9 XM`, `6:11 pm` `9:9 xm`. */
function shape(time: string): string {
  return time.replace(/\d+/g, '9').replace(/[ap](?=\.?m)/gi, (c) => (c === c.toUpperCase() ? 'X' : 'x'));
}
