// What a scenario gets: a virtual clock, a Host for the agent whose requests go to the real service
// through the fault proxy, and the means to script faults and read what the service holds. Plain ES2020
// with no host global: the same code runs on Node and is bundled into the XS worker, where only the Link
// (how commands reach the Node side) differs.
import type { Host, HttpRequest, HttpResult } from '../../src/core/host/host';
import type { CreatedFeed, Feed, InputValue, Resource } from '../../src/core/wire/wire';
import type { FaultRule, StoredFeed } from '../support/fault-proxy';
import { VirtualClock, drainMicrotasks } from '../support/virtual-clock';
import { operationOf } from './operation';
import type { Operation } from './operation';
import type { Link } from './protocol';
import { DEVICE } from './seed';

/** One request the agent made, in virtual time, and how it ended. */
export interface RequestRecord {
  /** Virtual time it was made, and when its result reached the agent. */
  t: number;
  end: number;
  op: Operation;
  method: string;
  /** Path and query below the base URL. */
  path: string;
  /** Elements of an operation-4 body; 0 for any other request. */
  elements: number;
  body: string | null;
  /** `200`, `429`, ... or `network` / `timeout`. */
  outcome: string;
}

export interface ServiceView {
  /** Every feed the service answered 200 for, in creation order. */
  stored(): Promise<StoredFeed[]>;
  /** The stored `raw_data` of one resource's feeds, in creation order. */
  values(resource: number): Promise<InputValue[]>;
  /** Operation 2, silent and without the token, so it changes no presence. */
  resources(ids: number[]): Promise<Resource[]>;
  /** Operations 5 and 6, the same way. */
  firstFeeds(ids: number[]): Promise<(Feed | null)[]>;
  lastFeeds(ids: number[]): Promise<(Feed | null)[]>;
  /** Operation 3 with the device's token, as another client of the device (a phone app) would. */
  create(resource: number, input: InputValue): Promise<CreatedFeed>;
}

export interface ScenarioContext {
  clock: VirtualClock;
  host: Host;
  url: string;
  publicKey: string;
  token: string;
  /** Every request the host made, oldest first. */
  requests: RequestRecord[];
  /** Everything the agent logged, `level: message`. */
  logs: string[];
  /** How many requests of `op` the host has made and not yet had settled. */
  inFlight(op: Operation): number;
  /** Adds fault rules to the proxy (see FaultAction). */
  faults(...rules: FaultRule[]): Promise<void>;
  clearFaults(): Promise<void>;
  /** Takes the proxy off the network (connections refused) or back on. */
  down(down: boolean): Promise<void>;
  service: ServiceView;
}

/**
 * A link that keeps track of the commands still running, and the wait a virtual clock needs before time
 * moves: on Node a request is real I/O, and the work its answer starts must run before the next timer.
 */
export function trackedLink(link: Link): { call: Link; idle: () => Promise<void> } {
  const inflight = new Set<Promise<unknown>>();
  let calls = 0;
  const call: Link = (command) => {
    const answer = link(command);
    calls++;
    inflight.add(answer);
    const done = () => inflight.delete(answer);
    answer.then(done, done);
    return answer;
  };
  const idle = async (): Promise<void> => {
    // Bounded: each round lets the work a finished request started run, and that may start another. On
    // XS a command is answered at once, so a round that started one is followed by another: a chain of
    // requests runs to its end however many promise jobs it takes, as it does on Node.
    for (let round = 0; round < 1000; round++) {
      const before = calls;
      await drainMicrotasks();
      if (inflight.size === 0 && calls === before) return;
      await Promise.all([...inflight].map((p) => p.catch(() => undefined)));
    }
    throw new Error('the agent kept requests in flight through 1000 rounds without letting time move');
  };
  return { call, idle };
}

/** Builds the context for one scenario run; `url` is the fault proxy's. */
export function createContext(link: Link, url: string): ScenarioContext {
  const { call, idle } = trackedLink(link);
  const clock = new VirtualClock(idle);
  const requests: RequestRecord[] = [];
  const logs: string[] = [];
  const open: Operation[] = [];

  const request = async (req: HttpRequest): Promise<HttpResult> => {
    const t = clock.now();
    const op = operationOf(req.method, req.url);
    open.push(op);
    let result: HttpResult;
    try {
      const outcome = await call({ cmd: 'http', t, req });
      result = outcome.kind === 'pending' ? await timeout(outcome.id, req.timeoutMs) : outcome;
    } finally {
      open.splice(open.indexOf(op), 1);
    }
    const body = req.body ?? null;
    requests.push({
      t,
      end: clock.now(),
      op,
      method: req.method,
      path: req.url.slice(url.length),
      elements: body !== null && body.charAt(0) === '[' ? (JSON.parse(body) as unknown[]).length : 0,
      body,
      outcome: result.kind === 'response' ? String(result.status) : result.kind,
    });
    return result;
  };
  // The proxy holds the request: it times out after `timeoutMs` of virtual time, as the adapter's timer would.
  const timeout = (id: string, ms: number): Promise<HttpResult> =>
    new Promise((resolve, reject) => {
      clock.setTimer(ms, () => {
        call({ cmd: 'settle', t: clock.now(), id }).then((s) => resolve({ kind: 'timeout', maybeDelivered: s.maybeDelivered }), reject);
      });
    });

  const get = <T>(path: string): Promise<T> =>
    call({ cmd: 'get', t: clock.now(), path }).then((answer) => (answer as { payload: T }).payload);
  const stored = () => call({ cmd: 'stored', t: clock.now() });

  return {
    clock,
    host: {
      request,
      now: clock.now,
      setTimer: clock.setTimer,
      clearTimer: clock.clearTimer,
      log: (level, message) => void logs.push(level + ': ' + message),
    },
    url,
    publicKey: DEVICE.publicKey,
    token: DEVICE.token,
    requests,
    logs,
    inFlight: (op) => open.filter((o) => o === op).length,
    faults: (...rules) => call({ cmd: 'faults', rules }).then(() => undefined),
    clearFaults: () => call({ cmd: 'clear-faults' }).then(() => undefined),
    down: (down) => call({ cmd: 'down', down }).then(() => undefined),
    service: {
      stored,
      values: (resource) => stored().then((feeds) => feeds.filter((f) => f.id_resource === resource).map((f) => f.raw_data)),
      resources: (ids) => get<Resource[]>('/resources/' + ids.join(',') + '?silent=true'),
      firstFeeds: (ids) => get<(Feed | null)[]>('/resources/' + ids.join(',') + '/feeds/first?silent=true'),
      lastFeeds: (ids) => get<(Feed | null)[]>('/resources/' + ids.join(',') + '/feeds/last?silent=true'),
      create: (resource, input) =>
        call({ cmd: 'create', t: clock.now(), resource, input }).then((answer) => (answer as { payload: CreatedFeed }).payload),
    },
  };
}
