// The local service's demo device as the benchmarks use it: a valid value for each of its resources,
// readings for its numeric sensors, and the client of the baselines, which send one request per sample.
import { FeedClient } from '../src/core/wire/client';
import type { Host } from '../src/core/host/host';
import { createNodeHost } from '../platforms/node/host/host';
import { DEMO_PUBLIC_KEY, DEMO_TOKEN } from '../src/service';

/** A valid value for each demo resource. */
export const VALUES: Record<number, number | string> = { 101: 1, 102: 21.5, 103: 55, 104: 40, 105: 123456, 106: 'on', 107: 0, 108: 18 };

/** The demo device's numeric sensors, in the order readings cycle through them. */
export const NUMERIC = [102, 103, 104, 105];

/** Connection settings of the demo device at `url`. */
export function demoDevice(url: string): { url: string; publicKey: string; token: string } {
  return { url, publicKey: DEMO_PUBLIC_KEY, token: DEMO_TOKEN };
}

/** The core's client of the demo device at `url`, through the Node host unless `request` is given. */
export function demoClient(url: string, request: Host['request'] = createNodeHost().request): FeedClient {
  return new FeedClient(request, { baseUrl: url, publicKey: DEMO_PUBLIC_KEY, token: DEMO_TOKEN, timeoutMs: 10_000 });
}
