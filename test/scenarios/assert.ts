// A few assertions that run on any engine: vitest's expect does not exist inside the XS worker.
import { errorText } from '../../src/core/wire/errors';

export class AssertionError extends Error {
  override name = 'AssertionError';
}

export function ok(condition: boolean, what: string): asserts condition {
  if (!condition) throw new AssertionError(what);
}

/** Deep equality of JSON values (key order ignored). */
export function equal<T>(actual: T, expected: T, what: string): void {
  const a = canonical(actual);
  const e = canonical(expected);
  if (a !== e) throw new AssertionError(what + ': expected ' + clip(e) + ', got ' + clip(a));
}

export function atMost(actual: number, limit: number, what: string): void {
  if (!(actual <= limit)) throw new AssertionError(what + ': expected at most ' + limit + ', got ' + actual);
}

export function atLeast(actual: number, limit: number, what: string): void {
  if (!(actual >= limit)) throw new AssertionError(what + ': expected at least ' + limit + ', got ' + actual);
}

/** Awaits a promise that must reject; returns its error's message. */
export async function rejects(promise: Promise<unknown>, what: string): Promise<string> {
  try {
    await promise;
  } catch (e) {
    return errorText(e);
  }
  throw new AssertionError(what + ': expected a rejection, but it resolved');
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return '[' + value.map(canonical).join(',') + ']';
  if (typeof value === 'object' && value !== null) {
    const o = value as Record<string, unknown>;
    return '{' + Object.keys(o).sort().filter((k) => o[k] !== undefined).map((k) => JSON.stringify(k) + ':' + canonical(o[k])).join(',') + '}';
  }
  return value === undefined ? 'undefined' : JSON.stringify(value);
}

function clip(text: string): string {
  return text.length > 300 ? text.slice(0, 300) + '…' : text;
}
