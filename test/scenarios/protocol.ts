// The messages between a scenario (on Node, or inside the XS worker) and the Node side that owns the
// real service and the fault proxy. JSON both ways, so the XS side can send them through issueCommand.
import type { HttpRequest, HttpResult } from '../../src/core/host';
import type { InputValue } from '../../src/core/wire';
import type { FaultRule, StoredFeed } from '../support/fault-proxy';

export type Command =
  /** Makes the request through the fault proxy. `t` is the virtual time: it is the service's clock. */
  | { cmd: 'http'; t: number; req: HttpRequest }
  /** The virtual timeout of a held request fired at `t`: the Node side drops it and says whether it arrived. */
  | { cmd: 'settle'; t: number; id: string }
  | { cmd: 'faults'; rules: FaultRule[] }
  | { cmd: 'clear-faults' }
  /** Takes the proxy off the network (connections refused) or back on. */
  | { cmd: 'down'; down: boolean }
  /** A GET straight to the service (no proxy, no token, so no presence update), for assertions. */
  | { cmd: 'get'; t: number; path: string }
  /** Operation 3 straight to the service with the device's token, as another client of the device would. */
  | { cmd: 'create'; t: number; resource: number; input: InputValue }
  /** Every feed the service answered 200 for, in creation order, as of virtual time `t`. */
  | { cmd: 'stored'; t: number };

/** The answer to 'http': a result, or word that the proxy holds the request and will never answer. */
export type HttpOutcome = HttpResult | { kind: 'pending'; id: string };

export interface Answers {
  http: HttpOutcome;
  settle: { maybeDelivered: boolean };
  faults: null;
  'clear-faults': null;
  down: null;
  get: unknown;
  create: unknown;
  stored: StoredFeed[];
}

/** Sends one command and gets its answer (synchronously on XS, wrapped in a promise for one interface). */
export type Link = <C extends Command>(command: C) => Promise<Answers[C['cmd']]>;
