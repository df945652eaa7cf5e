// The dashboard's figures. In Chromium (test/support/chromium.ts), the time from navigation to every
// chart drawn, for 8 resources × 10,000 feeds each, beside the same page with no feed (its fixed cost):
// the page's own mark `dashboard:drawn` (app.js), the median of RUNS loads. The feeds sit in a SQLite
// file that holds HISTORY older feeds too, as a service that has run for long would; on that file, a
// page of the local API from the middle of the history, from the index and, as the baseline, without it.
// The service is the built CLI's `feed-agent serve --db FILE`, as a user runs it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Seed } from '../src/service';
import { FEED_PAGE_SQL, Store } from '../src/service/store';
import { timestamp } from '../src/service/time';
import { launchChromium } from '../test/support/chromium';
import type { Chromium } from '../test/support/chromium';
import { median } from './measure';
import type { BenchSection } from './section';
import { serve } from './serve';

const RESOURCES = [201, 202, 203, 204, 205, 206, 207, 208];
const POINTS = 10_000;
/** Older feeds, before the page's window, spread over the same resources. */
const HISTORY = 2_000_000;
const RECENT_MS = 50 * 60_000;
const RUNS = 3;
const PAGE = 1_000;

const SEED: Seed = {
  subtypes: [{ id_resource_subtype: 1, id_resource_type: 1, name: 'Level', name_i18n: 'Level', description: null, data_format_operation: 0, data_restriction_regex: null, data_restriction_begin_range: -1000, data_restriction_end_range: 1000 }],
  devices: [{ public_key: 'BENCH', token: 'bench-token', name: 'Bench Device', resources: RESOURCES.map((id) => ({ id_resource: id, id_resource_subtype: 1, name: `Level ${id}`, description: '', lifetime: 60 })) }],
};

/**
 * A service database with the seed's resources; with `feeds`, POINTS feeds on each over the last
 * RECENT_MS (inside the window of an hour the page is opened on, which ends at the wall clock's now) after
 * HISTORY feeds in the months before.
 */
function database(file: string, feeds: boolean): void {
  const nowMs = Date.now();
  const store = new Store(file);
  store.applySeed(SEED, timestamp(nowMs));
  store.close();
  if (!feeds) return;
  const db = new Database(file);
  try {
    const insert = db.prepare('INSERT INTO feeds (id_resource, raw_data, created_at) VALUES (?, ?, ?)');
    db.transaction(() => {
      const historyStart = nowMs - 120 * 86_400_000;
      for (let i = 0; i < HISTORY; i++) insert.run(RESOURCES[i % RESOURCES.length], String(i % 997), timestamp(historyStart + i * 3_000));
      for (let i = 0; i < POINTS; i++) {
        const at = timestamp(nowMs - RECENT_MS + (i * RECENT_MS) / POINTS);
        RESOURCES.forEach((id, r) => insert.run(id, (Math.round(500 * Math.sin(i / 300 + r)) / 10).toString(), at));
      }
      db.exec(`UPDATE resources SET
        id_first_feed = (SELECT min(id_resource_feed) FROM feeds f WHERE f.id_resource = resources.id_resource),
        id_last_feed = (SELECT max(id_resource_feed) FROM feeds f WHERE f.id_resource = resources.id_resource)`);
    })();
  } finally {
    db.close();
  }
}

/** Median milliseconds from navigation to the page's `dashboard:drawn` mark; checks every point was drawn. */
async function renderMs(browser: Chromium, seedFile: string, dbFile: string, points: number): Promise<number> {
  const service = await serve(['--seed', seedFile, '--db', dbFile]);
  try {
    const times: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const page = await browser.context.newPage();
      // The hour, named: left to itself, the page would pick 24 hours to hold the history's oldest feed.
      await page.goto(service.url + '/?window=1h');
      // Run in the page (the bench's types have no DOM, hence `any`).
      await page.waitForFunction(() => (globalThis as any).document.body.dataset.ready === 'true', undefined, { timeout: 60_000 });
      const drawn = await page.evaluate(() =>
        [...(globalThis as any).document.querySelectorAll('.plot')].reduce((n: number, p: any) => n + Number(p.dataset.points), 0),
      );
      if (drawn !== points) throw new Error(`the page drew ${drawn} points, not ${points}`);
      times.push(await page.evaluate(() => performance.getEntriesByName('dashboard:drawn')[0].startTime));
      await page.close();
    }
    return median(times);
  } finally {
    await service.stop();
  }
}

/** Median milliseconds of one page of PAGE feeds from the middle of the history, with the index or without. */
function pageMs(dbFile: string, indexed: boolean): number {
  const db = new Database(dbFile, { readonly: true });
  try {
    const middle = db.prepare('SELECT id_resource_feed, created_at FROM feeds WHERE id_resource_feed = ?').get(HISTORY / 2) as { id_resource_feed: number; created_at: string };
    const sql = indexed ? FEED_PAGE_SQL.asc : FEED_PAGE_SQL.asc.replace('FROM feeds', 'FROM feeds NOT INDEXED');
    const statement = db.prepare(sql);
    const bounds = { resource: RESOURCES[0], at: middle.created_at, id: middle.id_resource_feed, from: '0000-00-00 00:00:00', to: '9999-12-31 23:59:59', since: 0, limit: PAGE };
    const times: number[] = [];
    for (let run = 0; run < (indexed ? 50 : 3); run++) {
      const start = performance.now();
      if (statement.all(bounds).length !== PAGE) throw new Error('a short page');
      times.push(performance.now() - start);
    }
    return median(times);
  } finally {
    db.close();
  }
}

/**
 * Median milliseconds of a live chart's read when nothing is new, on a chart that holds its resource's
 * POINTS recent feeds (full): the newest feeds stored since its newest, down to its oldest point (app.js,
 * newestFeeds), filtered by id over the index's entries; or, as the baseline, the read before ages, the
 * feeds after its last point in time order (a seek).
 */
function liveReadMs(dbFile: string, since: boolean): number {
  const db = new Database(dbFile, { readonly: true });
  try {
    const resource = RESOURCES[0];
    const newest = db.prepare('SELECT id_resource_feed AS id, created_at AS at FROM feeds WHERE id_resource = ? ORDER BY id_resource_feed DESC LIMIT 1').get(resource) as { id: number; at: string };
    const oldest = db.prepare(`SELECT created_at AS at FROM feeds WHERE id_resource = ? ORDER BY id_resource_feed DESC LIMIT 1 OFFSET ${POINTS - 1}`).get(resource) as { at: string };
    const statement = db.prepare(since ? FEED_PAGE_SQL.desc : FEED_PAGE_SQL.asc);
    const bounds = since
      ? { resource, at: '9999-12-31 23:59:59', id: Number.MAX_SAFE_INTEGER, from: oldest.at, to: '9999-12-31 23:59:59', since: newest.id, limit: POINTS }
      : { resource, at: newest.at, id: newest.id, from: '0000-00-00 00:00:00', to: '9999-12-31 23:59:59', since: 0, limit: POINTS };
    const times: number[] = [];
    for (let run = 0; run < 50; run++) {
      const start = performance.now();
      if (statement.all(bounds).length !== 0) throw new Error('the live read found a feed');
      times.push(performance.now() - start);
    }
    return median(times);
  } finally {
    db.close();
  }
}

export async function benchDashboard(): Promise<BenchSection> {
  const dir = mkdtempSync(join(tmpdir(), 'feed-agent-bench-dashboard-'));
  const browser = await launchChromium();
  try {
    const seedFile = join(dir, 'seed.json');
    writeFileSync(seedFile, JSON.stringify(SEED));
    const full = join(dir, 'full.db');
    const empty = join(dir, 'empty.db');
    database(full, true);
    database(empty, false);
    const points = RESOURCES.length * POINTS;
    const render = await renderMs(browser, seedFile, full, points);
    const renderEmpty = await renderMs(browser, seedFile, empty, 0);
    const indexed = pageMs(full, true);
    const scanned = pageMs(full, false);
    const live = liveReadMs(full, true);
    const liveAfter = liveReadMs(full, false);
    const total = HISTORY + points;
    return {
      title: `Dashboard in Chromium (median of ${RUNS} loads; baseline: the same page with no feed) and its feed pages`,
      rows: [
        // No toLocaleString: the XS harness's lockdown turns it into toString (bench/main.ts).
        { label: `page load to charts drawn, ${RESOURCES.length} × ${POINTS / 1000}k points`, value: Math.round(render), baseline: Math.round(renderEmpty), unit: 'ms' },
        { label: `one page of ${PAGE} feeds among ${total / 1e6} million (baseline: no index)`, value: Math.round(indexed * 100) / 100, baseline: Math.round(scanned), unit: 'ms' },
        {
          label: `a full chart's live read, nothing new: stored since its newest, over its ${POINTS / 1000}k points (baseline: after its last point in time)`,
          value: Math.round(live * 1000) / 1000,
          baseline: Math.round(liveAfter * 1000) / 1000,
          unit: 'ms',
        },
      ],
      figures: {
        'dashboard.renderMs': Math.round(render),
        'dashboard.renderEmptyMs': Math.round(renderEmpty),
        'dashboard.points': points,
        'dashboard.feedPageMs': Math.round(indexed * 100) / 100,
        'dashboard.feedPageScanMs': Math.round(scanned),
        'dashboard.liveReadMs': Math.round(live * 1000) / 1000,
        'dashboard.liveReadAfterMs': Math.round(liveAfter * 1000) / 1000,
        'dashboard.feedsStored': total,
      },
    };
  } finally {
    await browser.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
