// The dashboard in a real browser (Debian's Chromium through playwright-core), as a user meets it: the
// built CLI's `simulate` (its own service inside) prints the page's URL; the page's charts gain points
// while the simulator runs; a command written from the page reaches the simulator, and a value that breaks
// the restriction shows the service's message; `serve` prints the URL on its second line; names and
// values with markup show as text. FEED_AGENT_SCREENSHOTS=1 writes the screenshots into docs/ (else tmp/).
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoFleetDevice } from '../../src/service';
import { launchChromium } from '../support/chromium';
import type { Chromium } from '../support/chromium';
import { device } from '../support/client';
import { Served } from '../support/serve';
import { ROOT, Sim, withBuiltCli } from './support';

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

async function screenshot(page: Page, name: string): Promise<void> {
  const file = join(work.dir, name);
  await page.screenshot({ path: file, fullPage: true });
  if (process.env.FEED_AGENT_SCREENSHOTS === '1') copyFileSync(file, join(ROOT, 'docs', name));
}

describe('the dashboard in Chromium', () => {
  it('shows the simulated device live, and a command written on the page reaches the simulator', { timeout: 90_000 }, async () => {
    const sim = new Sim(work.cli(), ['--json']);
    const start = await sim.next((e) => e.type === 'start');
    expect(start.dashboard).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(start.dashboard);

    await expect.poll(() => page.locator('.device-head h2').allTextContents(), WAIT).toEqual(['Demo Greenhouse Controller']);
    // One device: no pager.
    expect(await page.locator('#pager').isHidden()).toBe(true);
    await expect.poll(() => points(page, 102), WAIT).toBeGreaterThan(0);
    const before = await points(page, 102);
    // Live: more points arrive while the page stays open, drawn by uPlot on a canvas.
    await expect.poll(() => points(page, 102), WAIT).toBeGreaterThan(before);
    expect(await page.locator('.card[data-resource="102"] canvas').count()).toBeGreaterThan(0);
    await expect.poll(() => page.locator('.card[data-resource="102"] .presence').allTextContents(), WAIT).toEqual(['alive']);

    // The relay's first poll only notes the current state; a command is a feed written after it. The
    // card shows the resource's requests: the start-up lookup, then a poll.
    const relay = page.locator('.card[data-resource="107"]');
    const requests = async () => Number((await relay.locator('dd .value').allTextContents())[1]?.replace(/,/g, ''));
    await expect.poll(requests, WAIT).toBeGreaterThanOrEqual(2);
    await relay.getByRole('button', { name: 'On' }).click();
    await expect.poll(async () => (await relay.locator('.message').allTextContents())[0], WAIT).toMatch(/^stored 1 as feed \d+$/);
    const feed = Number((await relay.locator('.message').textContent())!.split(' ').pop());
    const command = await sim.next((e) => e.type === 'command' && e.resource === 107, 15_000);
    expect(command).toMatchObject({ value: true, feed });

    // A value the relay's subtype refuses: the service's own message, next to the control.
    await relay.locator('input[name="value"]').fill('2');
    await relay.getByRole('button', { name: 'Write' }).click();
    await expect.poll(() => relay.locator('.message.error').allTextContents(), WAIT).toEqual(['resource 107: value 2 is outside [0, 1]']);
    await expect.poll(() => points(page, 107), WAIT).toBe(1);
    // A text resource whose regex lists its words (on|off) has a button for each.
    const fan = page.locator('.card[data-resource="106"]');
    await fan.getByRole('button', { name: 'off', exact: true }).click();
    await expect.poll(() => fan.locator('.message').allTextContents(), WAIT).toEqual([expect.stringMatching(/^stored "off" as feed \d+$/)]);
    await expect.poll(() => fan.locator('ol.values li').count(), WAIT).toBe(1);
    // Enough points for a screenshot that shows the charts' shapes.
    await expect.poll(() => points(page, 102), { timeout: 40_000 }).toBeGreaterThanOrEqual(20);
    await screenshot(page, 'dashboard.png');
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
        const chart = new SeriesChart(parent, 'number');
        chart.append([100, 200, 300], [1, 2, 3], 0, 300);
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
      expect(asked.length).toBeGreaterThanOrEqual(2);
      for (const u of asked) expect(u.searchParams.get('limit'), u.search).toBe('10');
      await screenshot(page, 'dashboard-markup.png');
    } finally {
      await served.stop();
    }
  });
});
