// The six paths of the interface (docs/interface.md §4): which operation a request names, or 404 / 405.
import { HttpError } from './http';

export type Operation = 'getResource' | 'getResources' | 'createFeed' | 'createFeeds' | 'firstFeeds' | 'lastFeeds';

const IDS = '{ids}';

// Paths below /api/device/{PUBLIC_KEY}/. `resources/feeds` stands before `resources/{ids}` so that it wins.
const ROUTES: { operation: Operation; method: 'GET' | 'POST'; shape: string[] }[] = [
  { operation: 'getResource', method: 'GET', shape: ['resource', IDS] },
  { operation: 'createFeed', method: 'POST', shape: ['resource', IDS, 'feeds'] },
  { operation: 'createFeeds', method: 'POST', shape: ['resources', 'feeds'] },
  { operation: 'getResources', method: 'GET', shape: ['resources', IDS] },
  { operation: 'firstFeeds', method: 'GET', shape: ['resources', IDS, 'feeds', 'first'] },
  { operation: 'lastFeeds', method: 'GET', shape: ['resources', IDS, 'feeds', 'last'] },
];

const PREFIX = '/api/device/';

export interface Match {
  operation: Operation;
  publicKey: string;
  /** The id segment as sent ('' for operation 4). */
  ids: string;
  query: URLSearchParams;
}

/** Refuses with 405 (and Allow) a request `method` other than the ones `allowed`. */
export function allow(method: string, ...allowed: string[]): void {
  if (allowed.includes(method)) return;
  const all = allowed.join(', ');
  throw new HttpError(405, `${clip(method)} is not allowed here; use ${all}`, { Allow: all });
}

export function route(method: string, url: string): Match {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const unknown = () => new HttpError(404, 'there is no operation at ' + JSON.stringify(clip(path)));
  if (!path.startsWith(PREFIX)) throw unknown();
  const [key, ...rest] = path.slice(PREFIX.length).split('/');
  const found = ROUTES.find((r) => r.shape.length === rest.length && r.shape.every((s, i) => s === IDS || s === rest[i]));
  if (found === undefined || key === '') throw unknown();
  allow(method, found.method);
  let publicKey: string;
  try {
    publicKey = decodeURIComponent(key);
  } catch {
    throw new HttpError(400, 'the public key in the path is not valid percent-encoding');
  }
  const at = found.shape.indexOf(IDS);
  return { operation: found.operation, publicKey, ids: at < 0 ? '' : rest[at], query: new URLSearchParams(q < 0 ? '' : url.slice(q + 1)) };
}

/** Client text quoted in a message, cut short. */
export function clip(text: string): string {
  return text.length > 64 ? text.slice(0, 64) + '…' : text;
}
