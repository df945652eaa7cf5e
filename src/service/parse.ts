// Reading what a client sent, each part checked as the status table of docs/service.md says (400, 413, 415).
import type { IncomingMessage } from 'node:http';
import type { FeedInput, InputValue } from '../core/wire/wire';
import { LIMITS } from '../core/wire/wire';
import { HttpError } from './http';
import { clip } from './routes';

const ID = /^[1-9][0-9]{0,15}$/;

export function parseId(text: string, where = 'id'): number {
  const id = Number(text);
  if (!ID.test(text) || !Number.isSafeInteger(id)) throw new HttpError(400, `${where} ${JSON.stringify(clip(text))} is not a positive integer`);
  return id;
}

/** A comma-separated id list from the path; ids may repeat. */
export function parseIdList(text: string, maxIds: number): number[] {
  if (text === '') throw new HttpError(400, 'the id list in the path is empty');
  const parts = text.split(',');
  if (parts.length > maxIds) throw new HttpError(413, `the path names ${parts.length} ids; the limit is ${maxIds}`);
  return parts.map((part) => parseId(part));
}

/** A query parameter given at most once; undefined when absent. */
export function queryParam(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  if (values.length > 1) throw new HttpError(400, `${name} is given more than once`);
  return values[0];
}

/** The `silent` query parameter: true, false, 1 or 0, at most once. */
export function parseSilent(query: URLSearchParams): boolean {
  const value = queryParam(query, 'silent');
  if (value === undefined) return false;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new HttpError(400, `silent must be true, false, 1 or 0, not ${JSON.stringify(clip(value))}`);
}

/** A POST must say it carries JSON in UTF-8. */
export function checkContentType(req: IncomingMessage): void {
  const header = req.headers['content-type'];
  if (header === undefined) throw new HttpError(415, 'the request has no Content-Type; send application/json');
  const [type, ...params] = header.split(';').map((part) => part.trim().toLowerCase());
  if (type !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(type)) {
    throw new HttpError(415, `Content-Type ${JSON.stringify(clip(header))} is not JSON; send application/json`);
  }
  const charset = params.find((p) => p.startsWith('charset='));
  if (charset !== undefined && !/^charset="?utf-8"?$/.test(charset)) throw new HttpError(415, 'the body must be UTF-8');
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

export function parseJson(body: Buffer): unknown {
  if (body.length === 0) throw new HttpError(400, 'the body is empty; it must be JSON');
  let text: string;
  try {
    text = UTF8.decode(body);
  } catch {
    throw new HttpError(400, 'the body is not valid UTF-8');
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, 'the body is not valid JSON');
  }
}

/** The most a sample's `age_ms` may be (the wire's limit, in core/wire.ts). */
export const MAX_AGE_MS = LIMITS.maxAgeMs;

/** The body of operation 3: `{"input": value}`, and optionally `"age_ms"`. */
export function feedBody(body: unknown): Omit<FeedInput, 'id_resource'> {
  if (!isObject(body)) throw new HttpError(400, 'the body must be a JSON object with an input');
  return withAge(inputOf(body, ''), body, '');
}

/** The body of operation 4 as an array, before its elements are read one by one. */
export function batchBody(body: unknown, maxElements: number): unknown[] {
  if (!Array.isArray(body)) throw new HttpError(400, 'the body must be a JSON array of {id_resource, input}');
  if (body.length === 0) throw new HttpError(400, 'the body is an empty array');
  if (body.length > maxElements) throw new HttpError(413, `the body has ${body.length} elements; the limit is ${maxElements}`);
  return body;
}

/** One element of operation 4; `prefix` names it in messages (`element 3: `). */
export function batchElement(value: unknown, prefix: string): FeedInput {
  if (!isObject(value)) throw new HttpError(400, prefix + 'not an object with id_resource and input');
  const id = value.id_resource;
  if (id === undefined) throw new HttpError(400, prefix + 'id_resource is missing');
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) throw new HttpError(400, prefix + 'id_resource is not a positive integer');
  return { id_resource: id, ...withAge(inputOf(value, prefix), value, prefix) };
}

/** The input with the object's `age_ms` when it has one: an integer from 0 to MAX_AGE_MS (400 otherwise). */
function withAge(input: InputValue, o: Record<string, unknown>, prefix: string): { input: InputValue; age_ms?: number } {
  const age = o.age_ms;
  if (age === undefined) return { input };
  if (typeof age !== 'number' || !Number.isInteger(age)) {
    throw new HttpError(400, prefix + `age_ms must be an integer number of milliseconds, not ${clip(JSON.stringify(age))}`);
  }
  if (age < 0) throw new HttpError(400, prefix + `age_ms ${age} is negative; it is how long before sending the value was sampled`);
  if (age > MAX_AGE_MS) throw new HttpError(400, prefix + `age_ms ${age} is over the limit of ${MAX_AGE_MS} (30 days)`);
  return { input, age_ms: age };
}

function inputOf(o: Record<string, unknown>, prefix: string): InputValue {
  const input = o.input;
  if (input === undefined) throw new HttpError(400, prefix + 'input is missing');
  if (typeof input !== 'number' && typeof input !== 'boolean' && typeof input !== 'string') {
    throw new HttpError(400, prefix + 'input must be a number, a boolean or a string');
  }
  return input;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
