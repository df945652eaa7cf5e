// The local service's own JSON API under /_local/ (docs/dashboard.md): what the dashboard page reads and
// writes. It is the platform's side, not a device's: it needs and shows no device token, its reads change
// no usage counter and no presence, and its write is operation 3's checks, stored as the platform writing.
// Answers use the interface's envelope, so a failure reads like the service's other failures.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Feed } from '../core/wire/wire';
import { sendFeedsCsv } from './feeds-csv';
import { isBinarySubtype } from '../core/wire/validate';
import { HttpError, readBody, successBody } from './http';
import type { FeedPage, LocalResource, LocalState, ValueKind } from './local-wire';
import { platformFeed } from './operations';
import { checkContentType, parseId, parseJson, queryParam } from './parse';
import { resourceRecord } from './records';
import { allow, clip } from './routes';
import type { FeedRange, Store, SubtypeEntry } from './store';
import { timestamp } from './time';
import { unitOf } from './units';

export const LOCAL_API_PREFIX = '/_local/';

/** Feeds in one page: by default, and at most (8 charts of 10,000 points take a page each). */
const PAGE_LIMITS = { default: 1_000, max: 10_000 };
/** Devices in one page of the listing, by default and at most: the page polls it every second, whatever the fleet. */
const DEVICE_PAGE_LIMITS = { default: 10, max: 100 };

export interface LocalApiDeps {
  store: Store;
  now: () => number;
  maxBodyBytes: number;
}

/**
 * Answers a request whose path starts with LOCAL_API_PREFIX (and is not an asset) with a JSON body; null
 * when it sent the answer itself (a CSV file).
 */
export function localApi(deps: LocalApiDeps): (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams) => Promise<string | null> {
  const { store, now } = deps;
  return async (req, res, path, query) => {
    const parts = path.slice(LOCAL_API_PREFIX.length).split('/');
    if (parts.length === 1 && parts[0] === 'devices') {
      allow(req.method ?? '', 'GET');
      return successBody(JSON.stringify(state(store, now(), query)));
    }
    if (parts.length === 3 && parts[0] === 'resources' && parts[2] === 'feeds') {
      const id = parseId(parts[1]);
      if (req.method === 'POST') {
        checkContentType(req);
        const body = parseJson(await readBody(req, res, deps.maxBodyBytes));
        return platformFeed(store, id, body, now());
      }
      allow(req.method ?? '', 'GET', 'POST');
      if (store.resource(id) === undefined) throw new HttpError(404, `resource ${id} not found`);
      return successBody(JSON.stringify(feedPage(store, id, query)));
    }
    if (parts.length === 3 && parts[0] === 'resources' && parts[2] === 'feeds.csv') {
      allow(req.method ?? '', 'GET');
      const id = parseId(parts[1]);
      if (store.resource(id) === undefined) throw new HttpError(404, `resource ${id} not found`);
      await sendFeedsCsv(res, store, id, time(query, 'from') ?? EARLIEST, time(query, 'to') ?? LATEST);
      return null;
    }
    throw new HttpError(404, 'there is nothing at ' + JSON.stringify(clip(path)));
  };
}

/** `page` (from 1) of `limit` devices, with the records of their resources. */
function state(store: Store, nowMs: number, query: URLSearchParams): LocalState {
  const limit = limitParameter(query, DEVICE_PAGE_LIMITS, 'devices');
  const pageText = queryParam(query, 'page');
  const page = pageText === undefined ? 1 : parseId(pageText, 'page');
  const { total, devices } = store.devicePage((page - 1) * limit, limit);
  return {
    now: timestamp(nowMs),
    total,
    devices: devices.map(({ resources, ...device }) => ({
      ...device,
      resources: resources.map((id): LocalResource => {
        const { subtype } = store.resource(id)!;
        const kind = valueKind(subtype);
        return {
          kind,
          command: store.takesCommands(subtype.record),
          unit: kind === 'number' ? unitOf(subtype.record) : null,
          record: resourceRecord(store.resourceRow(id)!, subtype.record, nowMs),
        };
      }),
    })),
  };
}

/**
 * The agent's rule for the value of a command (core/resources.ts, parseCommand): a string when the
 * compiled restriction has a regex (an empty one is none), a boolean for a binary subtype, else a number.
 */
function valueKind({ record, restriction }: SubtypeEntry): ValueKind {
  if (restriction.regex !== null) return 'string';
  return isBinarySubtype(record) ? 'boolean' : 'number';
}

/** The bounds of all time, for a range with no `from` or `to`. */
const EARLIEST = '0000-00-00 00:00:00';
const LATEST = '9999-12-31 23:59:59';

const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

/**
 * `from`, `to` (the interface's timestamps, inclusive), `order` (asc, desc), `after` (a feed id),
 * `since` (a feed id: only those stored after it), `limit`.
 */
function feedPage(store: Store, resource: number, query: URLSearchParams): FeedPage {
  const order = queryParam(query, 'order') ?? 'asc';
  if (order !== 'asc' && order !== 'desc') throw new HttpError(400, `order must be asc or desc, not ${JSON.stringify(clip(order))}`);
  const limit = limitParameter(query, PAGE_LIMITS, 'feeds');
  const afterText = queryParam(query, 'after');
  let after: Feed | null = null;
  if (afterText !== undefined) {
    after = store.feed(parseId(afterText, 'after')) ?? null;
    if (after?.id_resource !== resource) throw new HttpError(400, `after ${afterText} is not a feed of resource ${resource}`);
  }
  const sinceText = queryParam(query, 'since');
  const since = sinceText === undefined ? 0 : parseId(sinceText, 'since');
  const range: FeedRange = { from: time(query, 'from') ?? EARLIEST, to: time(query, 'to') ?? LATEST, order, after, since, limit };
  const rows = store.feedPage(resource, range);
  return {
    id_resource: resource,
    id_resource_feed: rows.map((row) => row[0]),
    created_at: rows.map((row) => row[1]),
    raw_data: rows.map((row) => row[2]),
    next: rows.length === limit ? rows[rows.length - 1][0] : null,
  };
}

/** `limit`: how many `things` a page holds, from 1 to `limits.max`. */
function limitParameter(query: URLSearchParams, limits: { default: number; max: number }, things: string): number {
  const text = queryParam(query, 'limit');
  const limit = text === undefined ? limits.default : parseId(text, 'limit');
  if (limit > limits.max) throw new HttpError(400, `limit ${limit} is over the most a page holds, ${limits.max} ${things}`);
  return limit;
}

function time(query: URLSearchParams, name: string): string | undefined {
  const text = queryParam(query, name);
  if (text !== undefined && (!TIMESTAMP.test(text) || Number.isNaN(Date.parse(text.replace(' ', 'T') + 'Z')))) {
    throw new HttpError(400, `${name} must be a UTC time as YYYY-MM-DD HH:MM:SS, not ${JSON.stringify(clip(text))}`);
  }
  return text;
}
