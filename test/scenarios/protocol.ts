// The messages between a scenario (on Node, or inside the XS worker) and the Node side that owns the
// real service and the fault proxy. JSON both ways, so the XS side can send them through issueCommand.
import type { HttpRequest, HttpResult } from '../../src/core/host/host';
import type { InputValue } from '../../src/core/wire/wire';
import type { FaultRule, StoredFeed } from '../support/fault-proxy';
import type { DiskAnswer, DiskOp } from '../support/disk';

export type Command =
  /** Makes the request through the fault proxy. `t` is the virtual time: it is the service's clock. */
  | { cmd: 'http'; t: number; req: HttpRequest }
  /** The virtual timeout of a held request fired at `t`: the Node side drops it and says whether it arrived. */
  | { cmd: 'settle'; t: number; id: string }
  | { cmd: 'faults'; rules: FaultRule[] }
  | { cmd: 'clear-faults' }
  /**
   * Takes the proxy off the network (connections refused) or back on. Going down also ends every kept-open
   * connection (`connect`), as a service that stops does; the answer names them.
   */
  | { cmd: 'down'; down: boolean }
  /** The server closes every kept-open connection that is idle, as a server's keep-alive timeout does; the answer names them. */
  | { cmd: 'close-idle' }
  /** A GET straight to the service (no proxy, no token, so no presence update), for assertions. */
  | { cmd: 'get'; t: number; path: string }
  /** Operation 3 straight to the service with the device's token, as another client of the device would. */
  | { cmd: 'create'; t: number; resource: number; input: InputValue }
  /** Every feed the service answered 200 for, in creation order, as of virtual time `t`. */
  | { cmd: 'stored'; t: number }
  /** Whether a connection to 127.0.0.1:port is accepted (the proxy is on the network). */
  | { cmd: 'probe'; port: number }
  /** Writes a request's bytes (latin1) to 127.0.0.1:port and answers with every byte that came back. */
  | { cmd: 'raw'; t: number; port: number; bytes: string }
  /** Opens a connection to 127.0.0.1:port that stays open for `send`. */
  | { cmd: 'connect'; port: number }
  /** Writes one request's bytes (latin1) on connection `conn`; answers with its response's bytes. */
  | { cmd: 'send'; t: number; conn: string; bytes: string }
  /** The device closed connection `conn`. */
  | { cmd: 'hangup'; conn: string }
  /** One operation of the disk behind the file stand-in (synchronous on XS). */
  | { cmd: 'disk'; op: DiskOp };

/** What came back for a raw request: the bytes until the connection ended (or broke), or word of a hold. */
export type RawOutcome = { kind: 'refused' } | { kind: 'answer'; bytes: string; broken: boolean } | { kind: 'pending'; id: string };

/** A connection opened by 'connect', or refused. */
export type ConnectOutcome = { kind: 'connected'; conn: string } | { kind: 'refused' };

/**
 * What came back for a request sent on a kept-open connection: the bytes of one response (all of them, or
 * what came before the connection ended), and whether the connection has ended; or word of a hold.
 */
export type SendOutcome = { kind: 'answer'; bytes: string; closed: boolean } | { kind: 'pending'; id: string };

/** The answer to 'http': a result, or word that the proxy holds the request and will never answer. */
export type HttpOutcome = HttpResult | { kind: 'pending'; id: string };

export interface Answers {
  http: HttpOutcome;
  settle: { maybeDelivered: boolean };
  faults: null;
  'clear-faults': null;
  down: string[];
  'close-idle': string[];
  get: unknown;
  create: unknown;
  stored: StoredFeed[];
  probe: boolean;
  raw: RawOutcome;
  connect: ConnectOutcome;
  send: SendOutcome;
  hangup: null;
  disk: DiskAnswer;
}

/** Sends one command and gets its answer (synchronously on XS, wrapped in a promise for one interface). */
export type Link = <C extends Command>(command: C) => Promise<Answers[C['cmd']]>;
