// A resource's feeds over a time range as a CSV file (RFC 4180), for the dashboard's download link
// (docs/dashboard.md, CSV). Written page by page from the index as the client takes it, so that a day of
// feeds is never held whole in memory.
import type { ServerResponse } from 'node:http';
import type { FeedRange, FeedRow, Store } from './store';

/** Feeds read from the store at a time. */
const PAGE = 10_000;

const HEADER = 'id_resource_feed,created_at,raw_data\r\n';

/**
 * Sends the feeds of `resource` from `from` to `to` (inclusive, the interface's UTC timestamps), oldest
 * first, as an attachment named for the resource.
 */
export async function sendFeedsCsv(res: ServerResponse, store: Store, resource: number, from: string, to: string): Promise<void> {
  res.writeHead(200, {
    'Content-Type': 'text/csv; charset=utf-8',
    'Content-Disposition': `attachment; filename="resource-${resource}-feeds.csv"`,
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-store',
  });
  let more = res.write(HEADER);
  const range: FeedRange = { from, to, order: 'asc', after: null, since: 0, limit: PAGE };
  for (;;) {
    const rows = store.feedPage(resource, range);
    if (rows.length > 0) more = res.write(rows.map(csvLine).join(''));
    if (rows.length < PAGE || res.destroyed) break;
    const [id, at] = rows[rows.length - 1];
    range.after = { id_resource_feed: id, created_at: at };
    if (!more) await new Promise((resolve) => res.once('drain', resolve).once('close', resolve));
  }
  res.end();
}

function csvLine([id, at, raw]: FeedRow): string {
  return `${id},${at},${csvField(raw)}\r\n`;
}

/**
 * A value as a CSV field: quoted when it holds a comma, quote or line break (quotes doubled). A text that
 * a spreadsheet would run as a formula (=, +, -, @ first, and not a number) gets a leading apostrophe:
 * a device's value is data, never a command to the reader's spreadsheet.
 */
export function csvField(raw: string): string {
  const text = /^[=+\-@\t\r]/.test(raw) && !Number.isFinite(Number(raw)) ? "'" + raw : raw;
  return /[",\r\n]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
}
