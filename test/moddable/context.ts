// What an adapter scenario gets: devices made of the Moddable adapter on stand-ins for the SDK's
// `http`, `timer`, `time` and `file` (./standins), whose requests go over real connections to the real
// local service through the fault proxy. Plain ES2020 with no host global: the same code runs on Node
// and inside the XS worker, where only the links differ (scenario-backend.ts answers both).
import type { FileClass, Sdk } from '../../platforms/moddable/sdk';
import type { FaultRule, StoredFeed } from '../support/fault-proxy';
import { VirtualClock } from '../support/virtual-clock';
import { trackedLink } from '../scenarios/context';
import type { Link } from '../scenarios/protocol';
import { DEVICE } from '../scenarios/seed';
import { timeStandIn, timerStandIn } from './standins/clock';
import { fileStandIn } from './standins/file';
import type { DiskLink } from './standins/file';
import { requestStandIn } from './standins/http';
import type { RequestStandInOptions } from './standins/http';

export interface DeviceOptions {
  /** The room the socket reports per write (default 1,024, lin's). */
  room?: number;
  refusal?: RequestStandInOptions['refusal'];
  lostAfterBody?: boolean;
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
}

export interface AdapterContext {
  url: string;
  publicKey: string;
  token: string;
  device(options?: DeviceOptions): Device;
  /** The `file` module's File, on a disk that outlives devices, as flash outlives a reboot. */
  files: FileClass;
  faults(...rules: FaultRule[]): Promise<void>;
  down(down: boolean): Promise<void>;
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
const decode = (bytes: ArrayBuffer): string => {
  const fromArrayBuffer = (String as { fromArrayBuffer?: (b: ArrayBuffer) => string }).fromArrayBuffer;
  return fromArrayBuffer !== undefined ? fromArrayBuffer(bytes) : new TextDecoder().decode(bytes);
};

function createAdapterContext(link: Link, disk: DiskLink, url: string): AdapterContext {
  const { call, idle } = trackedLink(link);
  const clocks: VirtualClock[] = [];
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
      const Request = requestStandIn({
        wire: {
          connects: (port) => call({ cmd: 'probe', port }),
          exchange: (port, bytes) => call({ cmd: 'raw', t: clock.now(), port, bytes }),
          drop: (id) => void call({ cmd: 'settle', t: clock.now(), id }),
        },
        room: options.room,
        refusal: options.refusal,
        lostAfterBody: options.lostAfterBody,
        written,
      });
      const sdk: Sdk = {
        Request,
        Timer: timerStandIn(clock),
        Time: timeStandIn(clock, options.ticksAt0 ?? 0),
        trace: (text) => void trace.push(text),
        decode,
      };
      return { clock, sdk, trace, written };
    },
    files: fileStandIn(disk),
    faults: (...rules) => call({ cmd: 'faults', rules }).then(() => undefined),
    down: (down) => call({ cmd: 'down', down }).then(() => undefined),
    stored: () => call({ cmd: 'stored', t: now() }),
    create: (t, resource, input) => call({ cmd: 'create', t, resource, input }).then(() => undefined),
  };
}

/** Runs one scenario in a fresh context; resolves with what it saw. */
export function runAdapterScenario(scenario: AdapterScenario, link: Link, disk: DiskLink, url: string): Promise<unknown> {
  return scenario.run(createAdapterContext(link, disk, url));
}
