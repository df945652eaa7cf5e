// What an answer of the service may be, checked on its way in (client.ts): how many bytes it may bring,
// what a failure's text says, and the shape of every record against the interface's tables, with
// operation 4's answer read in either of its forms.
import type { CreatedFeed, Feed, FeedInput, InputValue, Resource, Subtype } from './wire';
import { rawData } from './validate';

export interface BatchAnswer {
  /** Request indices the service rejected (from the {success, failed} form), ascending; empty for the plain array form. */
  rejected: { index: number; reason: string }[];
  /** The feeds the service created: one per stored element (in request order in the plain array form). */
  feeds: CreatedFeed[];
  /** The answer came in the {success, failed} form: the service may store part of a batch. */
  partial: boolean;
}

// The most answer bytes a request may bring (HttpRequest.maxResponseBytes): what it can honestly produce,
// with room to spare, so a broken or hostile peer cannot make the host read megabytes (README, "Bounded
// answers"). Every answer may be an error page of a proxy or a short envelope: ANSWER_FLOOR.
// A read brings one record per id: a resource record's fixed fields take under 1 KB, the rest is text a
// person wrote (names, descriptions, a regex) and a last feed's raw_data, a reading of at most the queue's
// 2,048 string bytes by default, 6 bytes a character when escaped: RECORD_BYTES each. A write's answer
// echoes each input as its raw_data, 6 bytes a body character at worst (a \uXXXX escape), plus a created
// feed's fixed fields or a refused element's message: ELEMENT_BYTES each.
const ANSWER_FLOOR = 16384;
const RECORD_BYTES = 16384;
const ELEMENT_BYTES = 512;

/** The answer bound of a read of `records` records. */
export function readBound(records: number): number {
  return ANSWER_FLOOR + records * RECORD_BYTES;
}

/** The answer bound of a write of `body` holding `elements` inputs. */
export function writeBound(body: string, elements: number): number {
  return ANSWER_FLOOR + 6 * body.length + elements * ELEMENT_BYTES;
}

/** What an error answer says: its envelope's message, else its text without markup (a proxy's page). */
export function failureDetail(body: string): string {
  let detail = '';
  try {
    const message = (JSON.parse(body) as Record<string, unknown> | null)?.message;
    if (typeof message === 'string') detail = clip(message);
  } catch {
    // Not a failure envelope: its text says what happened.
  }
  return detail || clip(body.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim()) || 'empty answer';
}

// A server's text in a message stays short: a message lives as long as the error.
export function clip(text: string): string {
  return text.length > 200 ? text.slice(0, 200) + '…' : text;
}

// ---- Checking answers ------------------------------------------------------------------------------
// A check returns null when the value fits, otherwise where and how it does not, relative to the value:
// `.subtype.data_restriction_end_range: expected integer, got string`. The path is only built on the way
// out of a failure, so a good answer costs no strings.
//
// A table gives each field of a record a type letter: i integer, s string, b boolean, a array, v input
// (number, boolean or string), S a subtype, F a feed; then `?` when null is allowed too,
// `*` when the field may be absent. Fields a table does not list are tolerated.

export type Table = Readonly<Record<string, string>>;

// The tables are frozen: on a Moddable build a preloaded object that is not costs a RAM pointer (the XS
// linker warns "not frozen"); frozen, it lives in flash alone.
const TYPES: Readonly<Record<string, readonly [string, (v: unknown) => boolean]>> = Object.freeze({
  i: Object.freeze(['integer', (v: unknown) => Number.isInteger(v)] as const),
  s: Object.freeze(['string', (v: unknown) => typeof v === 'string'] as const),
  b: Object.freeze(['boolean', (v: unknown) => typeof v === 'boolean'] as const),
  a: Object.freeze(['array', Array.isArray] as const),
  v: Object.freeze(['number, boolean or string', isValue] as const),
});

// The interface's tables (docs/interface.md §2.2–2.4, and Values: nulls for a resource without feeds), one entry per field
// of the wire type: the mapped types make the compiler insist that none is left out.
const SUBTYPE: { readonly [K in keyof Subtype]: string } = Object.freeze({
  id_resource_subtype: 'i',
  id_resource_type: 'i',
  name: 's',
  name_i18n: 's',
  description: 's?',
  data_format_operation: 'i',
  data_restriction_regex: 's?',
  data_restriction_begin_range: 'i',
  data_restriction_end_range: 'i',
  created_at: 's',
  updated_at: 's',
});

const FEED: { readonly [K in keyof Feed]: string } = Object.freeze({ id_resource_feed: 'i', id_resource: 'i', raw_data: 's', created_at: 's' });

export const CREATED: { readonly [K in keyof CreatedFeed]: string } = Object.freeze({ ...FEED, raw_data: 'v' });

export const RESOURCE: { readonly [K in keyof Resource]: string } = Object.freeze({
  id_resource: 'i',
  id_device: 'i',
  id_resource_subtype: 'i',
  id_last_feed: 'i?',
  name: 's',
  description: 's',
  lifetime: 'i',
  api_requests_usage: 'i',
  api_network_usage: 'i',
  api_network_income_usage: 'i',
  api_network_outgoing_usage: 'i',
  lifetime_updated_at: 's?',
  created_at: 's',
  updated_at: 's',
  active: 'i',
  is_alive: 'b',
  is_dead: 'b',
  subtype: 'S',
  last_feed: 'F?',
  data_format: 'a',
});

/** A rejected element of the {success, failed} form: `id_resource`, then hints (wire.ts, FailedFeed). */
const FAILED: Table = Object.freeze({ id_resource: 'i', input: 'v*', index: 'i*', message: 's*', error: 's*' });

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function isValue(v: unknown): boolean {
  return typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string';
}

export function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  // Numbers are shown (they say what is wrong and carry no secret); strings never are.
  return typeof v === 'number' ? 'number ' + v : typeof v;
}

export function mismatch(expected: string, v: unknown): string {
  return v === undefined ? ': missing' : ': expected ' + expected + ', got ' + typeName(v);
}

function fieldIssue(v: unknown, type: string): string | null {
  if ((type[1] === '?' && v === null) || (type[1] === '*' && v === undefined)) return null;
  const letter = type[0];
  if (letter === 'S' || letter === 'F') return recordIssue(v, letter === 'S' ? SUBTYPE : FEED);
  const [name, test] = TYPES[letter];
  return test(v) ? null : mismatch(type[1] === '?' ? name + ' or null' : name, v);
}

/** Checks every field of `table` in `v`; with `id`, the record must also be of that resource. */
export function recordIssue(v: unknown, table: Table, id?: number): string | null {
  if (!isRecord(v)) return mismatch('object', v);
  for (const key in table) {
    const issue = fieldIssue(v[key], table[key]);
    if (issue !== null) return '.' + key + issue;
  }
  return id === undefined || v.id_resource === id ? null : '.id_resource: expected ' + id + ', got ' + v.id_resource;
}

/** Operations 5 and 6: a feed of resource `id`, or null for a resource without one. */
export function feedOrNullIssue(v: unknown, id: number): string | null {
  return v === null ? null : recordIssue(v, FEED, id);
}

/** An array of `count` entries (`what`), each checked by `entryIssue`; the issue of the first that fails. */
export function listIssue(v: unknown, count: number, entryIssue: (i: number) => string | null, what: string): string | null {
  if (!Array.isArray(v)) return mismatch('array', v);
  if (v.length !== count) return ': expected ' + count + ' ' + what + ', got ' + v.length;
  for (let i = 0; i < count; i++) {
    const issue = entryIssue(i);
    if (issue !== null) return '[' + i + ']' + issue;
  }
  return null;
}

/**
 * Operation 4's answer, in either form, read; or the issue that makes it malformed.
 * Plain array: one created feed per element, in order. `{success, failed}`: every element appears once
 * in one of the two lists. The public record does not show what a `failed` entry holds, so an entry is
 * mapped to its element by `index` when it gives one, else to the first element not yet matched with
 * its id_resource (and its input, when both sides know it). Entries that give an index go first, then
 * `success` entries (their raw_data is the input as sent), then the other `failed` entries, so that
 * a weaker match cannot take an element a stronger one names.
 */
export function batchAnswer(
  payload: unknown,
  count: number,
  resourceAt: (i: number) => number,
  elements: readonly FeedInput[] | null,
): BatchAnswer | string {
  if (Array.isArray(payload)) {
    const issue = listIssue(payload, count, (i) => recordIssue(payload[i], CREATED, resourceAt(i)), 'entries');
    return issue ?? { rejected: [], feeds: payload as CreatedFeed[], partial: false };
  }
  if (!isRecord(payload)) return mismatch('array or {success, failed}', payload);
  const issue = recordIssue(payload, { success: 'a', failed: 'a' });
  if (issue !== null) return issue;
  const { success, failed } = payload as { success: unknown[]; failed: Record<string, unknown>[] };
  if (success.length + failed.length !== count) {
    return ': ' + success.length + ' stored and ' + failed.length + ' failed entries for ' + count + ' elements';
  }
  for (let i = 0; i < failed.length; i++) {
    const entryIssue = recordIssue(failed[i], FAILED);
    if (entryIssue !== null) return '.failed[' + i + ']' + entryIssue;
  }
  const taken = new Uint8Array(count);
  const rejected: BatchAnswer['rejected'] = [];
  const match = (id: unknown, value: unknown): number => {
    for (let i = 0; i < count; i++) {
      if (taken[i] === 0 && resourceAt(i) === id &&
        (value === undefined || elements === null || rawData(elements[i].input) === rawData(value as InputValue))) {
        taken[i] = 1;
        return i;
      }
    }
    return -1;
  };
  const reject = (index: number, entry: Record<string, unknown>): void => {
    const text = entry.message ?? entry.error;
    rejected.push({ index, reason: text ? clip(text as string) : 'rejected by the service' });
  };
  for (let i = 0; i < failed.length; i++) {
    const entry = failed[i];
    const index = entry.index as number | undefined;
    if (index === undefined) continue;
    if (index < 0 || index >= count || taken[index] === 1 || resourceAt(index) !== entry.id_resource) {
      return '.failed[' + i + '].index: ' + index + ' is not an unmatched element with id_resource ' + entry.id_resource;
    }
    taken[index] = 1;
    reject(index, entry);
  }
  for (let i = 0; i < success.length; i++) {
    const feed = success[i] as CreatedFeed;
    const entryIssue = recordIssue(feed, CREATED);
    if (entryIssue !== null) return '.success[' + i + ']' + entryIssue;
    if (match(feed.id_resource, feed.raw_data) < 0) {
      return '.success[' + i + ']: no unmatched element with id_resource ' + feed.id_resource + ' and that raw_data';
    }
  }
  for (let i = 0; i < failed.length; i++) {
    const entry = failed[i];
    if (entry.index !== undefined) continue;
    const index = match(entry.id_resource, entry.input);
    if (index < 0) return '.failed[' + i + ']: no unmatched element with id_resource ' + entry.id_resource;
    reject(index, entry);
  }
  rejected.sort((a, b) => a.index - b.index);
  return { rejected, feeds: success as CreatedFeed[], partial: true };
}

/** The elements of a body this client was given to send, or null if it is not what it should be. */
export function parseOwnBody(body: string, count: number): FeedInput[] | null {
  try {
    const parsed: unknown = JSON.parse(body);
    return Array.isArray(parsed) && parsed.length === count ? (parsed as FeedInput[]) : null;
  } catch {
    return null;
  }
}
