// What an adapter scenario gets: devices made of the Moddable adapter on stand-ins for the SDK's
// `http`, the ECMA-419 HTTP client and the classic socket under it, `timer`, `time` and `file`
// (./standins), whose requests go over real connections to the real local service through the fault proxy. Plain ES2020 with no host global: the same code runs on Node
// and inside the XS worker, where only the links differ (scenario-backend.ts answers both).
import type { Sdk } from '../../platforms/moddable/host/sdk';
import type { FileSystem } from '../../platforms/moddable/storage/file-module';
import type { FaultRule, StoredFeed } from '../support/fault-proxy';
import { VirtualClock } from '../support/virtual-clock';
import { trackedLink } from '../scenarios/context';
import type { Link } from '../scenarios/protocol';
import { DEVICE } from '../scenarios/seed';
import { timeStandIn, timerStandIn } from './standins/clock';
import { fileSystemStandIn } from './standins/file';
import type { DiskLink } from './standins/file';
import { requestStandIn } from './standins/http';
import type { RequestStandInOptions } from './standins/http';
import { StandInHttpClient } from './standins/http-client';
import { socketStandIn } from './standins/socket';
import type { SocketStandIn } from './standins/socket';
import { utf8Bytes } from './standins/bytes';

export interface DeviceOptions {
  /** The room the socket reports per write (default 1,024, lin's). */
  room?: number;
  refusal?: RequestStandInOptions['refusal'];
  lostAfterBody?: boolean;
  /** The connection is lost once the socket took a whole request (keep-alive host). */
  lostAfterRequest?: boolean;
  /** The write that completes a request throws "write failed", as lin's socket does: it took nothing. */
  failLastWrite?: boolean;
  /** Time.ticks at the device's virtual time 0 (default 0); near 2^31 to cross the rollover. */
  ticksAt0?: number;
  /** The device's virtual time at its start, for a device booting after another stopped (default 0). */
  bootAt?: number;
}

/** One device: its own virtual clock, and an SDK of stand-ins on it. A device that is dropped is dead. */
export interface Device {
  clock: VirtualClock;
  sdk: Sdk;
  /** What the device traced. */
  trace: string[];
  /** Each request's bytes as written to the connection. */
  written: string[];
  /** Connections the keep-alive host's socket opened (or tried to). */
  connections: number;
}

export interface AdapterContext {
  url: string;
  publicKey: string;
  token: string;
  device(options?: DeviceOptions): Device;
  /** The `file` module's File and Iterator, on a disk that outlives devices, as flash outlives a reboot. */
  files: FileSystem;
  faults(...rules: FaultRule[]): Promise<void>;
  /** Takes the proxy off the network or back on; going down ends the devices' open connections, and tells them. */
  down(down: boolean): Promise<void>;
  /**
   * The server closes every idle kept-open connection (its keep-alive timeout); with `tell` (default) the
   * devices hear of it at once, without, only when they next use the connection.
   */
  closeIdle(tell?: boolean): Promise<void>;
  /** Every feed the service answered 200 for, in creation order. */
  stored(): Promise<StoredFeed[]>;
  /** Operation 3 with the device's token, as another client of the device would. */
  create(t: number, resource: number, input: number): Promise<void>;
}

export interface AdapterScenario {
  name: string;
  /** Resolves with what the scenario saw, which must be the same on Node and on XS. */
  run(ctx: AdapterContext): Promise<unknown>;
}

/** The engine's own UTF-8 decoder, as the device's is XS's String.fromArrayBuffer: both are native. */
const decode = (bytes: ArrayBuffer, length: number): string => {
  const fromArrayBuffer = (String as { fromArrayBuffer?: (b: ArrayBuffer, offset: number, length: number) => string }).fromArrayBuffer;
  return fromArrayBuffer !== undefined ? fromArrayBuffer(bytes, 0, length) : new TextDecoder().decode(new Uint8Array(bytes, 0, length));
};

function createAdapterContext(link: Link, disk: DiskLink, url: string): AdapterContext {
  const { call, idle } = trackedLink(link);
  const clocks: VirtualClock[] = [];
  /** Every device's open sockets, by connection id: the network tells them when the service ends them. */
  const open = new Map<string, SocketStandIn>();
  const tell = (ids: string[]): void => {
    for (const id of ids) open.get(id)?.lost();
  };
  /** The service's virtual time: the latest of the devices'. */
  const now = (): number => clocks.reduce((t, clock) => Math.max(t, clock.now()), 0);
  return {
    url,
    publicKey: DEVICE.publicKey,
    token: DEVICE.token,
    device(options = {}) {
      const clock = new VirtualClock(idle, options.bootAt ?? 0);
      clocks.push(clock);
      const trace: string[] = [];
      const written: string[] = [];
      const device = { clock, trace, written, connections: 0 } as Device;
      const Request = requestStandIn({
        wire: {
          connects: (port) => call({ cmd: 'probe', port }),
          exchange: (port, bytes) => call({ cmd: 'raw', t: clock.now(), port, bytes }),
          drop: (id) => void call({ cmd: 'settle', t: clock.now(), id }),
        },
        room: options.room,
        refusal: options.refusal,
        lostAfterBody: options.lostAfterBody,
        failLastWrite: options.failLastWrite,
        written,
      });
      const Socket = socketStandIn({
        wire: {
          connect: (port) => (device.connections++, call({ cmd: 'connect', port })),
          send: (conn, bytes) => call({ cmd: 'send', t: clock.now(), conn, bytes }),
          hangup: (conn) => void call({ cmd: 'hangup', conn }),
          drop: (id) => void call({ cmd: 'settle', t: clock.now(), id }),
        },
        room: options.room,
        refusal: options.refusal,
        failLastWrite: options.failLastWrite,
        lostAfterRequest: options.lostAfterRequest,
        written,
        open,
      });
      const sdk: Sdk = {
        Request,
        HTTPClient: StandInHttpClient,
        Socket,
        Timer: timerStandIn(clock),
        Time: timeStandIn(clock, options.ticksAt0 ?? 0),
        trace: (text) => void trace.push(text),
        decode,
        encode: utf8Bytes,
      };
      device.sdk = sdk;
      return device;
    },
    files: fileSystemStandIn(disk),
    faults: (...rules) => call({ cmd: 'faults', rules }).then(() => undefined),
    down: (down) => call({ cmd: 'down', down }).then(tell),
    closeIdle: (told = true) => call({ cmd: 'close-idle' }).then((ids) => (told ? tell(ids) : undefined)),
    stored: () => call({ cmd: 'stored', t: now() }),
    create: (t, resource, input) => call({ cmd: 'create', t, resource, input }).then(() => undefined),
  };
}

/** Runs one scenario in a fresh context; resolves with what it saw. */
export function runAdapterScenario(scenario: AdapterScenario, link: Link, disk: DiskLink, url: string): Promise<unknown> {
  return scenario.run(createAdapterContext(link, disk, url));
}
