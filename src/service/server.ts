// The service as a Node HTTP server: options, the request pipeline (route, syntax, device, token, rate,
// body, operation) and the server's own protections (timeouts, header limits, connection cap).
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LIMITS } from '../core/wire/wire';
import { bearerToken, tokenMatches } from './auth';
import { createDashboard } from './dashboard';
import type { Dashboard, DashboardOptions } from './dashboard';
import { demoFleetDevice, demoFleetSeed } from './demo';
import { firmwareShelf } from './firmware';
import type { FirmwareShelf } from './firmware';
import type { DemoDevice } from './demo';
import { answerClientError, ClientGone, failureBody, HttpError, readBody, send } from './http';
import * as operations from './operations';
import { checkContentType, parseId, parseIdList, parseJson, parseSilent } from './parse';
import { RateLimiter } from './rate-limit';
import type { RateLimit } from './rate-limit';
import { clip, route } from './routes';
import type { Match } from './routes';
import { checkSeed } from './seed';
import type { Seed } from './seed';
import { Store } from './store';
import { timestamp } from './time';

/** The limits of docs/interface.md (core's LIMITS are the defaults), each configurable. */
export type ServiceLimits = Record<keyof typeof LIMITS, number>;

export interface ServiceTimeouts {
  /** Time allowed to receive the request headers. */
  headersMs: number;
  /** Time allowed to receive a whole request. */
  requestMs: number;
  /** How long an idle keep-alive connection stays open. */
  keepAliveMs: number;
  /** A connection with no traffic at all for this long is closed. */
  idleMs: number;
}

export interface ServiceOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** Subtypes, devices and resources to start with; without it, the built-in demo device. */
  seed?: Seed;
  /** Without a seed: this many devices like the demo device (the demo fleet, docs/service.md). Default 1. */
  demoDevices?: number;
  /** SQLite file; without it the data lives in memory. */
  dbFile?: string;
  /** Wall-clock ms; every timestamp, presence and the rate limit read it. Default Date.now. */
  now?: () => number;
  limits?: Partial<ServiceLimits>;
  /** Without it there is no rate limit (and no 429). */
  rateLimit?: RateLimit;
  timeouts?: Partial<ServiceTimeouts>;
  /** Serve the dashboard at `/` and its API under /_local/ (docs/dashboard.md); without it, only the interface. */
  dashboard?: DashboardOptions;
  /** Serve the firmware images of this folder under /firmware (docs/interface.md, "Firmware updates"). */
  firmwareDir?: string;
}

export type { DemoDevice };

/** A service that is not listening yet. */
export interface Service {
  server: Server;
  /** The built-in demo device (the first of a demo fleet), present when no seed was given. */
  demo?: DemoDevice;
  /** With the dashboard: its password (null on loopback without one). */
  dashboardPassword?: string | null;
  /**
   * Applies a seed while the service runs, as at start: records are created or updated to match it (a
   * device's new token counts from the next request). Throws a SeedError, changing nothing, when it is bad.
   */
  applySeed(seed: Seed): void;
  /** Stops accepting, closes every connection, then the database. */
  close(): Promise<void>;
}

export interface RunningService {
  /** `http://HOST:PORT`, without a trailing slash. */
  url: string;
  port: number;
  demo?: DemoDevice;
  /** With the dashboard: the page's URL and its password (null on loopback without one). */
  dashboard?: { url: string; password: string | null };
  applySeed(seed: Seed): void;
  close(): Promise<void>;
}

/** Loopback only, unless told otherwise: the dashboard's password rule depends on it too. */
const DEFAULT_HOST = '127.0.0.1';
// An idle connection is kept 65 s (as cloud load balancers keep 60 s), longer than an agent's command poll
// and flush periods: with Node's 5 s a device polling every 5 s raced the close and reconnected (a TLS
// handshake) almost every request. Node times headers from a request's first byte, not from the idle
// connection's last request, so headersMs can stay short.
const DEFAULT_TIMEOUTS: ServiceTimeouts = { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 65_000, idleMs: 60_000 };
const MAX_HEADER_BYTES = 16 * 1024;
const MAX_HEADERS = 100;
const MAX_CONNECTIONS = 1000;

export function createService(options: ServiceOptions = {}): Service {
  const now = options.now ?? Date.now;
  const limits = checkLimits({ ...LIMITS, ...options.limits });
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const limiter = options.rateLimit === undefined ? null : new RateLimiter(options.rateLimit, now);
  if (options.seed !== undefined && options.demoDevices !== undefined) throw new TypeError('give a seed or demoDevices, not both');
  const seed = options.seed === undefined ? demoFleetSeed(options.demoDevices ?? 1) : checkSeed(options.seed);
  const store = new Store(options.dbFile);
  let dashboard: Dashboard | undefined;
  let firmware: FirmwareShelf | undefined;
  try {
    store.applySeed(seed, timestamp(now()));
    firmware = options.firmwareDir === undefined ? undefined : firmwareShelf(options.firmwareDir);
    dashboard = options.dashboard && createDashboard(options.dashboard, options.host ?? DEFAULT_HOST, { store, now, maxBodyBytes: limits.maxBodyBytes });
  } catch (error) {
    store.close();
    throw error;
  }

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<string> {
    const match = route(req.method ?? '', req.url ?? '');
    const silent = parseSilent(match.query);
    const target = ids(match, limits);
    const device = store.device(match.publicKey);
    if (device === undefined) throw new HttpError(404, `no device has the public key ${JSON.stringify(clip(match.publicKey))}`);
    const token = bearerToken(req.headers.authorization);
    const challenge = { 'WWW-Authenticate': 'Bearer' };
    if (token === null) throw new HttpError(401, 'the Authorization header is not of the form Bearer <token>', challenge);
    const writes = match.operation === 'createFeed' || match.operation === 'createFeeds';
    if (token === undefined && writes) throw new HttpError(401, 'this operation needs Authorization: Bearer <token>', challenge);
    if (token !== undefined && !tokenMatches(token, device.tokenDigest)) throw new HttpError(401, "the token is not this device's", challenge);
    const wait = limiter === null ? 0 : limiter.take(device.id);
    if (wait > 0) throw new HttpError(429, `too many requests for this device; retry in ${wait} s`, { 'Retry-After': String(wait) });

    let body: unknown;
    let bodyBytes = 0;
    if (writes) {
      checkContentType(req);
      const raw = await readBody(req, res, limits.maxBodyBytes);
      bodyBytes = raw.length;
      body = parseJson(raw);
    }
    const nowMs = now();
    const ctx = { store, device, nowMs, stamp: timestamp(nowMs), presenceAt: token !== undefined && !silent ? nowMs : null };
    switch (match.operation) {
      case 'getResource':
        return operations.getResource(ctx, target[0]);
      case 'getResources':
        return operations.getResources(ctx, target);
      case 'createFeed':
        return operations.createFeed(ctx, target[0], body, bodyBytes);
      case 'createFeeds':
        return operations.createFeeds(ctx, body, limits.maxBatchElements);
      case 'firstFeeds':
        return operations.firstFeeds(ctx, target);
      case 'lastFeeds':
        return operations.lastFeeds(ctx, target);
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const url = req.url ?? '';
      const body = firmware?.owns(url) ? firmware.answer(req, res) : dashboard?.owns(url) ? await dashboard.answer(req, res) : await answer(req, res);
      if (body !== null) send(req, res, 200, body);
    } catch (error) {
      if (error instanceof ClientGone) return;
      if (error instanceof HttpError) {
        send(req, res, error.status, failureBody(error.message), error.headers);
        return;
      }
      // A fault of the service itself; the error never carries a token (only digests reach the store).
      console.error('feed-agent service: internal error:', error);
      send(req, res, 500, failureBody('the service failed to answer; see its log'));
    }
  }

  const server = createServer(
    {
      maxHeaderSize: MAX_HEADER_BYTES,
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      keepAliveTimeout: timeouts.keepAliveMs,
      // How often Node checks the two timeouts above; a fraction of the shorter one.
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(timeouts.headersMs / 4))),
    },
    (req, res) => void handle(req, res),
  );
  server.timeout = timeouts.idleMs;
  server.maxHeadersCount = MAX_HEADERS;
  server.maxConnections = MAX_CONNECTIONS;
  server.on('clientError', answerClientError);
  // Handled like any request, so that a refused one (401, 413 by Content-Length...) never invites its body.
  server.on('checkContinue', (req, res) => void handle(req, res));

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      server.close(() => {
        store.close();
        resolve();
      });
      server.closeAllConnections();
    }));

  const demo = options.seed === undefined ? demoFleetDevice(0) : undefined;
  const applySeed = (next: Seed): void => store.applySeed(checkSeed(next), timestamp(now()));
  return { server, demo, dashboardPassword: dashboard?.password, applySeed, close };
}

/** Creates the service and listens; resolves once it accepts connections. */
export async function startService(options: ServiceOptions = {}): Promise<RunningService> {
  const service = createService(options);
  const host = options.host ?? DEFAULT_HOST;
  try {
    await new Promise<void>((resolve, reject) => {
      service.server.once('error', reject);
      service.server.listen(options.port ?? 0, host, () => {
        service.server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await service.close();
    throw error;
  }
  const port = (service.server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const dashboard = service.dashboardPassword === undefined ? undefined : { url: url + '/', password: service.dashboardPassword };
  return { url, port, demo: service.demo, dashboard, applySeed: service.applySeed, close: service.close };
}

/** The path's resource ids: one for operations 1 and 3, a list for 2, 5 and 6, none for 4. */
function ids(match: Match, limits: ServiceLimits): number[] {
  if (match.operation === 'createFeeds') return [];
  if (match.operation === 'getResource' || match.operation === 'createFeed') return [parseId(match.ids)];
  return parseIdList(match.ids, limits.maxIdsInPath);
}

function checkLimits(limits: ServiceLimits): ServiceLimits {
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`limits.${name} must be a positive integer`);
  }
  return limits;
}
