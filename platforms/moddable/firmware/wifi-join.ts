// Joins the Wi-Fi network before the firmware's main runs, in place of the SDK's setup/network
// (build/devices/{esp32,pico}/setup/network.js); wifi-setup.js hands it the SDK's modules. Like the SDK's, it
// joins, traces the address, asks SNTP for the time while the clock is unset, then calls done(), and
// without an ssid says so and calls done(). Unlike it, so that a board samples whatever the network does:
// - the ssid and password are the provisioned ones over the build's keys (stored-identity.ts);
// - a radio that does not start (the WiFi constructor or the first connect throws: a Pico W whose CYW43
//   does not answer fails in connect, where the SDK brings it up) is one line, and main runs: the agent
//   keeps its readings in the backlog. It is not tried again before a restart: that is a fault of the
//   board, not of the network, and each try resets the radio and polls its bus anew;
// - main waits for the network JOIN_WAIT_MS at most, and the joining goes on (the SDK's waits for ever);
// - every disconnect or failed join is followed by another join after a backoff wait: the ECMA-419 WiFi of
//   the ESP32 and the Pico W only reports a disconnect (modules/io/wifi/*/wifi-*.c call no join then), and
//   the SDK's setup, which closes it once it has an address, joins no more: a board whose access point
//   restarted stayed offline until reset.
// The time: the agent dates samples on its monotonic clock (host/clock.ts) and needs no wall clock to
// send them, so main need not wait for SNTP; only a backlog from before the clock was set, still on flash
// at the next boot, comes back undated (storage/flash-queue.ts). SNTP is asked again on each new address
// until the clock is set. The password is never traced.
import { UPLINK_DEFAULTS } from '../../../src/core/config';
import { createRandom } from '../../../src/core/host/random';
import { FailureReport, RetryLadder } from '../../../src/core/requests/retry-ladder';
import { errorText } from '../../../src/core/wire/errors';
import { createClock } from '../host/clock';
import type { TimeModule, TimerModule } from '../host/sdk';
import { WALL_KNOWN } from '../storage/flash-queue';
import { withStoredIdentity } from './stored-identity';
import type { PreferenceStore } from './stored-identity';

/** How long main waits for an address (and the time) before it runs anyway: a join and DHCP take seconds. */
export const JOIN_WAIT_MS = 30_000;

/** `connection` of the ECMA-419 WiFi: 500 with an address, 400 associated, 300 joining, 200 not connected. */
const HAS_ADDRESS = 500;
const ASSOCIATED = 400;
const DISCONNECTED = 200;

/** What is used of `embedded:network/interface/wifi` (modules/io/wifi/esp32 and pico). */
export interface SdkWiFi {
  readonly connection: number;
  readonly address: string | undefined;
  connect(options: { SSID: string; password?: string; secure?: boolean }): void;
}

/** The SDK's SNTP client (modules/network/sntp/sntp.js): the callback gets `time` with seconds since 1970, or `error` with why. */
export interface SntpClass {
  new (options: { host: string }, callback: (message: number, value?: unknown) => void): unknown;
  readonly time: number;
  readonly error: number;
}

export interface JoinParts {
  /** The build's config (`mc/config`): ssid, password and sntp, the stored ones over them. */
  build: Record<string, unknown>;
  preference: PreferenceStore;
  WiFi: new (options: { onChanged: () => void }) => SdkWiFi;
  SNTP: SntpClass;
  Timer: TimerModule;
  /** `time`, with `set`, which sets the wall clock in seconds. */
  Time: TimeModule & { set(seconds: number): void };
  /** Milliseconds since 1970 (`Date.now`). */
  wall(): number;
  /** The seed of the rejoins' backoff draws: the board's (hardware-seed), so that a fleet does not rejoin in step. */
  seed: number;
  trace(text: string): void;
}

/** setup/network's job: calls `done` once there is an address (and the time), or nothing to wait for. */
export function joinWiFi(parts: JoinParts, done: () => void): void {
  const { config } = withStoredIdentity(parts.build, parts.preference);
  const ssid = config.ssid;
  if (typeof ssid !== 'string' || ssid === '') {
    parts.trace('Wi-Fi: no ssid (provision one: feed-agent provision; or add ssid=… to the mcconfig line)\n');
    return done();
  }
  const password = typeof config.password === 'string' && config.password !== '' ? config.password : undefined;
  new Join(parts, ssid, password, typeof config.sntp === 'string' ? config.sntp : '', done).start();
}

class Join {
  private wifi: SdkWiFi | undefined;
  /** Until called: main waits. */
  private done: (() => void) | undefined;
  /** The bounded wait before main runs anyway. */
  private wait: unknown;
  /** A join waiting for its turn. */
  private rejoin: unknown;
  private online = false;
  private asking = false;
  private readonly now: () => number;
  private readonly ladder: RetryLadder;

  constructor(
    private readonly parts: JoinParts,
    private readonly ssid: string,
    private readonly password: string | undefined,
    private readonly sntp: string,
    done: () => void,
  ) {
    this.done = done;
    this.now = createClock(parts.Time);
    // The project's one backoff: 1 s doubling to 2 min; its report says a failing join once, then every 5 min.
    const report = new FailureReport('Wi-Fi', (_, message) => parts.trace(message + '\n'));
    this.ladder = new RetryLadder({ baseMs: UPLINK_DEFAULTS.backoffBaseMs, capMs: UPLINK_DEFAULTS.backoffCapMs }, report, createRandom(parts.seed));
  }

  start(): void {
    try {
      const wifi = new this.parts.WiFi({ onChanged: () => this.changed() });
      this.wifi = wifi;
      this.connect(wifi);
    } catch (e) {
      // The Pico W's CYW43 is brought up at the first join: a radio that does not answer fails there.
      this.say('the radio did not start (' + errorText(e) + '): no network until a restart; the agent runs and keeps its readings');
      return this.finish();
    }
    this.wait = this.parts.Timer.set(() => {
      this.wait = undefined;
      this.say('no address within ' + JOIN_WAIT_MS / 1000 + ' s: the firmware starts, and joining goes on');
      this.finish();
    }, JOIN_WAIT_MS);
  }

  private connect(wifi: SdkWiFi): void {
    const ssid = this.ssid, password = this.password;
    wifi.connect(password === undefined ? { SSID: ssid } : { SSID: ssid, password, secure: true });
  }

  /** A join after a failed or dropped one: the radio worked before, so a refusal is one more failed try. */
  private join(): void {
    this.rejoin = undefined;
    try {
      this.connect(this.wifi as SdkWiFi);
    } catch (e) {
      this.failed('the radio refused to join (' + errorText(e) + ')');
    }
  }

  /** The WiFi's onChanged: its callbacks come as messages, after the constructor returned. */
  private changed(): void {
    const wifi = this.wifi as SdkWiFi;
    const connection = wifi.connection;
    if (connection >= HAS_ADDRESS) {
      if (!this.online) this.addressed(String(wifi.address));
    } else if (connection <= DISCONNECTED) {
      const was = this.online;
      this.online = false;
      this.failed((was ? 'disconnected from "' : 'cannot join "') + this.ssid + '"');
    } else if (connection === ASSOCIATED && !this.online) {
      this.say('joined "' + this.ssid + '", waiting for an address');
    }
  }

  private failed(why: string): void {
    if (this.rejoin !== undefined) return;
    this.rejoin = this.parts.Timer.set(() => this.join(), this.ladder.fail(this.now(), why));
  }

  private addressed(address: string): void {
    this.online = true;
    this.ladder.succeed(this.now());
    this.say('IP address ' + address);
    if (this.sntp === '' || this.parts.wall() > WALL_KNOWN || this.asking) return this.finish();
    this.asking = true;
    const { SNTP, Time } = this.parts;
    const host = this.sntp;
    const answered = (text: string): void => {
      this.asking = false;
      this.say(text);
      this.finish();
    };
    try {
      new SNTP({ host }, (message, value) => {
        if (message === SNTP.time) {
          Time.set(value as number);
          answered('clock set from ' + host + ': ' + value);
        } else if (message === SNTP.error) answered('no time from ' + host + ' (' + String(value) + '): the firmware starts without it');
        // SNTP.retry: it asks again by itself.
      });
    } catch (e) {
      answered('no time from ' + host + ' (' + errorText(e) + '): the firmware starts without it');
    }
  }

  /** Lets main run (once). */
  private finish(): void {
    const done = this.done;
    if (done === undefined) return;
    this.done = undefined;
    if (this.wait !== undefined) this.parts.Timer.clear(this.wait);
    this.wait = undefined;
    done();
  }

  private say(text: string): void {
    this.parts.trace('Wi-Fi: ' + text + '\n');
  }
}
