// @ts-check
// The page's calls to the local API (/_local/, docs/dashboard.md), one function each. An answer is the
// interface's envelope; a failure becomes an Error carrying the service's own message, which the page
// shows as it is (a refused write names the rule the value broke).

/** @typedef {import('../local-wire').LocalState} LocalState */
/** @typedef {import('../local-wire').FeedPage} FeedPage */
/** @typedef {import('../../core/wire/wire').CreatedFeed} CreatedFeed */
/** @typedef {import('../../core/wire/wire').InputValue} InputValue */

/**
 * @template T
 * @param {string} path
 * @param {RequestInit} [init]
 * @returns {Promise<T>}
 */
async function call(path, init) {
  const res = await fetch(path, init);
  /** @type {import('../../core/wire/wire').Envelope<T>} */
  let envelope;
  try {
    envelope = await res.json();
  } catch {
    throw new Error(`the service answered ${res.status} without JSON`);
  }
  if (!envelope.success) throw new Error(envelope.message);
  return envelope.payload;
}

/**
 * One page of the devices and their resources.
 * @param {number} page from 1
 * @param {number} limit devices in a page
 * @returns {Promise<LocalState>}
 */
export function getState(page, limit) {
  return call(`/_local/devices?page=${page}&limit=${limit}`);
}

/**
 * @param {number} resource
 * @param {{from?: string, to?: string, order?: 'asc' | 'desc', after?: number, since?: number, limit?: number}} query
 * @returns {Promise<FeedPage>}
 */
export function getFeeds(resource, query) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  return call(`/_local/resources/${resource}/feeds?${params}`);
}

/**
 * @param {number} resource
 * @param {InputValue} input
 * @returns {Promise<CreatedFeed>}
 */
export function writeFeed(resource, input) {
  return call(`/_local/resources/${resource}/feeds`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ input }),
  });
}

/**
 * The address of a resource's feeds from `from` on, as a CSV file to download (the service names it).
 * @param {number} resource
 * @param {string} from the interface's `YYYY-MM-DD HH:MM:SS`, UTC
 */
export function csvUrl(resource, from) {
  return `/_local/resources/${resource}/feeds.csv?${new URLSearchParams({ from })}`;
}
