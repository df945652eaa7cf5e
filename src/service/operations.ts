// The six operations of the interface (docs/interface.md §4) over the store. Each checks everything first, then applies
// its request in one transaction (feeds, usage counters, presence) and returns the response body.
// Counters follow docs/interface.md (Usage counters): a request counts once on each resource it names or writes; outgoing
// bytes are the request body's share of a resource, income bytes the response body's share.
import { checkInput, rawData } from '../core/wire/validate';
import type { FeedInput, InputValue } from '../core/wire/wire';
import { MESSAGE_FEED_CREATED } from '../core/wire/wire';
import { HttpError, successBody } from './http';
import { batchBody, batchElement, feedBody } from './parse';
import { createdFeedJson, resourceRecord } from './records';
import type { DeviceEntry, NewFeed, ResourceEntry, Store } from './store';
import { timestamp } from './time';

/** When a request arrived. */
export interface Arrival {
  /** Wall-clock ms: the service's clock once the request's body was read. */
  nowMs: number;
  /** `nowMs` as the interface writes timestamps. */
  stamp: string;
}

export interface Context extends Arrival {
  store: Store;
  device: DeviceEntry;
  /** When the request updates presence (valid token, not silent): `nowMs`; otherwise null. */
  presenceAt: number | null;
}

/** Operation 1. */
export function getResource(ctx: Context, id: number): string {
  const { subtype } = owned(ctx, id, '');
  return ctx.store.transaction(() => {
    countReads(ctx, [id], null);
    const body = successBody(JSON.stringify(resourceRecord(ctx.store.resourceRow(id)!, subtype.record, ctx.nowMs)));
    ctx.store.addIncome(id, Buffer.byteLength(body));
    return body;
  });
}

/** Operation 2. */
export function getResources(ctx: Context, ids: number[]): string {
  return readEach(ctx, ids, true, (id, resource) => resourceRecord(ctx.store.resourceRow(id)!, resource.subtype.record, ctx.nowMs));
}

/** Operation 5. */
export function firstFeeds(ctx: Context, ids: number[]): string {
  return readEach(ctx, ids, false, (id) => ctx.store.firstFeed(id) ?? null);
}

/** Operation 6. */
export function lastFeeds(ctx: Context, ids: number[]): string {
  return readEach(ctx, ids, false, (id) => ctx.store.lastFeed(id) ?? null);
}

/** Operation 3; `bodyBytes` is the size of the whole request body (its outgoing usage). */
export function createFeed(ctx: Context, id: number, body: unknown, bodyBytes: number): string {
  const resource = owned(ctx, id, '');
  return ctx.store.transaction(() => {
    const { feed, response } = storeOne(resource, body, ctx, (row) => ctx.store.insertFeeds([row]));
    ctx.store.touch(id, {
      outgoingBytes: bodyBytes,
      incomeBytes: Buffer.byteLength(response),
      presenceAt: ctx.presenceAt,
      firstFeed: feed,
      lastFeed: feed,
      stamp: ctx.stamp,
    });
    return response;
  });
}

/**
 * Operation 3 as the platform writes it (the dashboard), not a device: the same checks and messages,
 * no token, and the stored feed changes no usage counter and no presence.
 */
export function platformFeed(store: Store, id: number, body: unknown, nowMs: number): string {
  const resource = store.resource(id);
  if (resource === undefined) throw new HttpError(404, `resource ${id} not found`);
  const at = { nowMs, stamp: timestamp(nowMs) };
  return storeOne(resource, body, at, (row) => store.platformFeed(row, at.stamp)).response;
}

/**
 * Operation 3 once its resource is found, for a device and the platform alike: the body's checks (400)
 * and the value's (422), then `store` (which returns the new feed's id), then the answer.
 */
function storeOne(resource: ResourceEntry, body: unknown, at: Arrival, store: (row: NewFeed) => number): { feed: number; response: string } {
  const { input, age_ms } = feedBody(body);
  check(input, resource, '');
  const createdAt = createdAtOf(at, age_ms);
  const feed = store({ resource: resource.id, rawData: rawData(input), createdAt });
  return { feed, response: successBody(createdFeedJson(JSON.stringify(input), resource.id, createdAt, feed), MESSAGE_FEED_CREATED) };
}

/**
 * A feed's `created_at`: the request's arrival, less the sample's age when it has one (docs/interface.md,
 * The sample's age), to the second below. Without an age it is the request's stamp itself, so that rows
 * of a request without ages share one string (Store.insertFeeds binds it once).
 */
function createdAtOf(at: Arrival, ageMs: number | undefined): string {
  return ageMs === undefined || ageMs === 0 ? at.stamp : timestamp(at.nowMs - ageMs);
}

interface Written {
  outgoing: number;
  income: number;
  first: number;
  last: number;
}

/**
 * Operation 4: every element is stored, in request order, or none is (docs/interface.md, Operation 4 is
 * atomic). Ids follow request order whatever the elements' ages; each element's `created_at` is its own.
 */
export function createFeeds(ctx: Context, body: unknown, maxElements: number): string {
  const elements: FeedInput[] = batchBody(body, maxElements).map((value, i) => {
    const prefix = `element ${i}: `;
    const element = batchElement(value, prefix);
    check(element.input, owned(ctx, element.id_resource, prefix), prefix);
    return element;
  });
  return ctx.store.transaction(() => {
    const rows = elements.map((e): NewFeed => ({ resource: e.id_resource, rawData: rawData(e.input), createdAt: createdAtOf(ctx, e.age_ms) }));
    const first = ctx.store.insertFeeds(rows);
    const written = new Map<number, Written>();
    const parts = elements.map((element, i) => {
      const id = element.id_resource;
      const feed = first + i;
      const input = JSON.stringify(element.input);
      const part = createdFeedJson(input, id, rows[i].createdAt, feed);
      // The element as read: id_resource, input and age_ms; fields the service ignores are not counted.
      const age = element.age_ms === undefined ? '' : ',"age_ms":' + element.age_ms;
      const read = '{"id_resource":' + id + ',"input":' + input + age + '}';
      // Only a string input can hold other than ASCII: the rest counts its characters as bytes.
      const wide = typeof element.input === 'string';
      const outgoing = wide ? Buffer.byteLength(read) : read.length;
      const income = wide ? Buffer.byteLength(part) : part.length;
      const seen = written.get(id);
      if (seen === undefined) written.set(id, { outgoing, income, first: feed, last: feed });
      else {
        seen.outgoing += outgoing;
        seen.income += income;
        seen.last = feed;
      }
      return part;
    });
    for (const [id, w] of written) {
      ctx.store.touch(id, { outgoingBytes: w.outgoing, incomeBytes: w.income, presenceAt: ctx.presenceAt, firstFeed: w.first, lastFeed: w.last, stamp: ctx.stamp });
    }
    return successBody('[' + parts.join(',') + ']');
  });
}

/**
 * The read operations over an id list: one payload entry per id, in path order, repeats included.
 * An entry that shows counters (a resource record) is rendered after the request is counted and before
 * any of its size is, so that a repeated id shows the same record each time; a feed entry shows none, so
 * the request and its size are counted in one go after rendering.
 */
function readEach(ctx: Context, ids: number[], showsCounters: boolean, render: (id: number, resource: ResourceEntry) => unknown): string {
  const resources = ids.map((id) => owned(ctx, id, ''));
  return ctx.store.transaction(() => {
    if (showsCounters) countReads(ctx, ids, null);
    const parts = ids.map((id, i) => JSON.stringify(render(id, resources[i])));
    const income = new Map<number, number>();
    parts.forEach((part, i) => income.set(ids[i], (income.get(ids[i]) ?? 0) + Buffer.byteLength(part)));
    if (showsCounters) for (const [id, bytes] of income) ctx.store.addIncome(id, bytes);
    else countReads(ctx, ids, income);
    return successBody('[' + parts.join(',') + ']');
  });
}

/** A read counts once on each resource it names, however often the path repeats it; `income` in bytes. */
function countReads(ctx: Context, ids: number[], income: Map<number, number> | null): void {
  for (const id of new Set(ids)) {
    const incomeBytes = income?.get(id) ?? 0;
    ctx.store.touch(id, { outgoingBytes: 0, incomeBytes, presenceAt: ctx.presenceAt, firstFeed: null, lastFeed: null, stamp: ctx.stamp });
  }
}

/** The resource, when it exists and is the device's; the same 404 otherwise, so nothing leaks across devices. */
function owned(ctx: Context, id: number, prefix: string): ResourceEntry {
  const resource = ctx.store.resource(id);
  if (resource === undefined || resource.deviceId !== ctx.device.id) throw new HttpError(404, `${prefix}resource ${id} not found`);
  return resource;
}

function check(input: InputValue, resource: ResourceEntry, prefix: string): void {
  const problem = checkInput(input, resource.subtype.restriction);
  if (problem !== null) throw new HttpError(422, `${prefix}resource ${resource.id}: ${problem}`);
}
