// The firmware's Wi-Fi setup (platforms/moddable/firmware/wifi-join.ts) on stand-ins for the SDK's WiFi,
// SNTP, Preference, Timer and Time, over a virtual clock: which network it joins, when main may run, and
// what it says. The stand-in WiFi reports what the test makes its radio do, as the ECMA-419 one does
// (modules/io/wifi/*: `connection` 200, 300, 400, 500 and onChanged). The Pico W in rp2040js runs the real
// thing against a radio that does not answer (test/firmware/pico.test.ts).
import { describe, expect, it } from 'vitest';
import { JOIN_WAIT_MS, joinWiFi } from '../../../platforms/moddable/firmware/wifi-join';
import type { JoinParts, SdkWiFi } from '../../../platforms/moddable/firmware/wifi-join';
import { VirtualClock } from '../../support/virtual-clock';

/** Past the SDK's "clock is set" mark (3 Jan 2023), and before it: a board just powered on. */
const SET_CLOCK = Date.UTC(2025, 5, 1);
const UNSET_CLOCK = 0;

type Connect = Parameters<SdkWiFi['connect']>[0];

interface Radio {
  /** Throws from the WiFi constructor or the first connect (a radio that does not start), or from every later connect. */
  fails?: 'start' | 'connect' | 'rejoin';
  /** Set: each join fails (200) after this many ms, while `out` holds, as out of the access point's range. */
  outOfRange?: { ms: number; out: boolean };
}

/** A board: its build config, its preference store, its radio and SNTP server, and what it said. */
function board(build: Record<string, unknown>, stored: Record<string, string> = {}, radio: Radio = {}, wall = SET_CLOCK) {
  const clock = new VirtualClock();
  const said: string[] = [];
  const joins: Connect[] = [];
  const sntp: string[] = [];
  let started = 0;
  let done = 0;
  let wifi: (SdkWiFi & { report(connection: number): void }) | undefined;
  let time = wall;
  let answerSntp: ((message: number, value?: unknown) => void) | undefined;
  const parts: JoinParts = {
    build,
    preference: { get: (domain, key) => (domain === 'feed-agent' ? stored[key] : undefined) },
    WiFi: class {
      connection = 200;
      address: string | undefined = undefined;
      constructor(private readonly options: { onChanged: () => void }) {
        started++;
        if (radio.fails === 'start') throw new Error('CYW43 init failed -1');
        wifi = this;
      }
      connect(options: Connect): void {
        if (radio.fails === 'connect' || (radio.fails === 'rejoin' && joins.length > 0)) throw new Error('connect failed -4');
        joins.push(options);
        this.connection = 300;
        const range = radio.outOfRange;
        if (range !== undefined) clock.setTimer(range.ms, () => this.report(range.out ? 200 : 500));
      }
      report(connection: number): void {
        this.connection = connection;
        this.address = connection === 500 ? '192.168.1.57' : undefined;
        this.options.onChanged();
      }
    },
    SNTP: Object.assign(
      class {
        constructor(options: { host: string }, callback: (message: number, value?: unknown) => void) {
          sntp.push(options.host);
          answerSntp = callback;
        }
      },
      { time: 1, error: -1 },
    ),
    Timer: { set: (fn, ms) => clock.setTimer(ms, fn), clear: (id) => clock.clearTimer(id as number) },
    Time: { get ticks() { return clock.now(); }, delta: (start, end) => (end ?? clock.now()) - start, set: (seconds) => void (time = seconds * 1000) },
    wall: () => time,
    seed: 7,
    trace: (text) => void said.push(text),
  };
  return {
    clock, said, joins, sntp, parts,
    start: () => joinWiFi(parts, () => void done++),
    get started() { return started; },
    get done() { return done; },
    get time() { return time; },
    /** The radio's next state, as the SDK's WiFi reports it. */
    report: (connection: number) => (wifi as NonNullable<typeof wifi>).report(connection),
    answerSntp: (message: number, value?: unknown) => (answerSntp as NonNullable<typeof answerSntp>)(message, value),
  };
}

describe('the Wi-Fi setup before main', () => {
  it('joins the stored network with its stored password, over the build\'s, and lets main run once it has an address', async () => {
    const b = board({ ssid: 'BuildNet', password: 'build-password', sntp: 'pool.ntp.org' }, { ssid: 'StoredNet', password: 'stored-password' });
    b.start();
    expect(b.joins).toEqual([{ SSID: 'StoredNet', password: 'stored-password', secure: true }]);
    await b.clock.advance(2_000);
    expect(b.done).toBe(0);
    b.report(400);
    b.report(500);
    expect(b.done).toBe(1);
    // The clock was set: no SNTP, and the bounded wait is gone with main's start.
    expect(b.sntp).toEqual([]);
    expect(b.clock.pending).toBe(0);
    expect(b.said).toEqual(['Wi-Fi: joined "StoredNet", waiting for an address\n', 'Wi-Fi: IP address 192.168.1.57\n']);
  });

  it('joins the build\'s network when nothing is stored, without a password when none is given', () => {
    const withPassword = board({ ssid: 'BuildNet', password: 'build-password' }, { token: '9F4E1A7C2B5D8E3F60A1C4D7' });
    withPassword.start();
    expect(withPassword.joins).toEqual([{ SSID: 'BuildNet', password: 'build-password', secure: true }]);
    const open = board({ ssid: 'CafeNet' });
    open.start();
    expect(open.joins).toEqual([{ SSID: 'CafeNet' }]);
  });

  it('with no ssid anywhere, says so and lets main run without starting the radio', () => {
    const b = board({ url: 'http://127.0.0.1:8080', password: 'orphan-password' }, { token: '9F4E1A7C2B5D8E3F60A1C4D7' });
    b.start();
    expect(b.started).toBe(0);
    expect(b.done).toBe(1);
    expect(b.said).toEqual(['Wi-Fi: no ssid (provision one: feed-agent provision; or add ssid=… to the mcconfig line)\n']);
    expect(b.clock.pending).toBe(0);
  });

  it.each(['start', 'connect'] as const)('when the radio does not start (%s throws), says so in one line without the password and lets main run at once, trying no more', async (fails) => {
    const b = board({ ssid: 'BuildNet' }, { ssid: 'StoredNet', password: 'stored-password' }, { fails });
    b.start();
    expect(b.done).toBe(1);
    const why = fails === 'start' ? 'CYW43 init failed -1' : 'connect failed -4';
    expect(b.said).toEqual(['Wi-Fi: the radio did not start (' + why + '): no network until a restart; the agent runs and keeps its readings\n']);
    expect(b.clock.pending).toBe(0);
    await b.clock.advance(600_000);
    expect(b.started).toBe(1);
    expect(b.joins).toEqual([]);
    expect(b.said).toHaveLength(1);
  });

  it('without a network, lets main run after the bounded wait, joins on with growing waits, and gets the time once it has an address', async () => {
    // Each join fails after 3 s: the ECMA-419 WiFi reports 200, and does not try again by itself.
    const range = { ms: 3_000, out: true };
    const b = board({ ssid: 'FarNet', password: 'far-password', sntp: 'pool.ntp.org' }, {}, { outOfRange: range }, UNSET_CLOCK);
    const tries: number[] = [];
    const joined = b.joins.push.bind(b.joins);
    b.joins.push = (...options) => (tries.push(b.clock.now()), joined(...options));
    b.start();
    await b.clock.advance(JOIN_WAIT_MS - 1);
    expect(b.done).toBe(0);
    await b.clock.advance(1);
    expect(b.done).toBe(1);
    expect(b.said).toContain('Wi-Fi: no address within 30 s: the firmware starts, and joining goes on\n');
    await b.clock.advance(400_000);
    // Every wait longer than half the one before, none longer than the cap (2 min), plus the 3 s of a join.
    const waits = tries.slice(1).map((t, i) => t - tries[i]);
    expect(waits.length).toBeGreaterThan(6);
    waits.slice(1).forEach((w, i) => expect(w).toBeGreaterThanOrEqual(waits[i] / 2));
    expect(Math.max(...waits)).toBeLessThanOrEqual(123_000);
    // Said once, then once after 5 minutes: not at every try.
    expect(b.said.filter((l) => l.includes('failing'))).toEqual(['Wi-Fi: failing: cannot join "FarNet"\n', expect.stringMatching(/^Wi-Fi: still failing, \d+ tries in \d+ s: cannot join "FarNet"\n$/)]);
    // The network comes: an address at the next join, the time asked of SNTP and set; main is not started twice.
    range.out = false;
    await b.clock.advance(126_000);
    expect(b.said.at(-1)).toBe('Wi-Fi: IP address 192.168.1.57\n');
    expect(b.said.at(-2)).toMatch(/^Wi-Fi: recovered after \d+ failed tries in \d+ s\n$/);
    expect(b.sntp).toEqual(['pool.ntp.org']);
    b.answerSntp(1, 1_750_000_000);
    expect(b.time).toBe(1_750_000_000_000);
    expect(b.said.at(-1)).toBe('Wi-Fi: clock set from pool.ntp.org: 1750000000\n');
    expect(b.done).toBe(1);
    expect(b.said.join('')).not.toContain('far-password');
  });

  it('with the clock unset, lets main run once SNTP answers or gives up; and joins again when the network drops', async () => {
    const b = board({ ssid: 'HomeNet', sntp: 'pool.ntp.org' }, {}, {}, UNSET_CLOCK);
    b.start();
    b.report(500);
    expect(b.done).toBe(0);
    b.answerSntp(2);
    expect(b.done).toBe(0);
    b.answerSntp(-1, 'no response from SNTP server');
    expect(b.done).toBe(1);
    expect(b.said.at(-1)).toBe('Wi-Fi: no time from pool.ntp.org (no response from SNTP server): the firmware starts without it\n');
    // The access point restarts: a join after the backoff's first wait, SNTP asked again on the new address.
    b.report(200);
    expect(b.said.at(-1)).toBe('Wi-Fi: failing: disconnected from "HomeNet"\n');
    await b.clock.advance(1_000);
    expect(b.joins).toHaveLength(2);
    b.report(500);
    expect(b.sntp).toEqual(['pool.ntp.org', 'pool.ntp.org']);
    b.answerSntp(1, 1_750_000_000);
    expect(b.time).toBe(1_750_000_000_000);
    expect(b.done).toBe(1);
  });

  it('when a join after a dropped network is refused, counts it a failed try and tries again later', async () => {
    const b = board({ ssid: 'HomeNet', password: 'home-password' }, {}, { fails: 'rejoin' });
    b.start();
    b.report(500);
    b.report(200);
    await b.clock.advance(10_000);
    expect(b.said.slice(1)).toEqual(['Wi-Fi: failing: disconnected from "HomeNet"\n']);
    // Refused at each turn of the backoff, not at once again: one timer armed, the next try.
    expect(b.clock.pending).toBe(1);
    await b.clock.advance(600_000);
    expect(b.said.slice(2)).toEqual([expect.stringMatching(/^Wi-Fi: still failing, \d+ tries in \d+ s: the radio refused to join \(connect failed -4\)\n$/)]);
    expect(b.said.join('')).not.toContain('home-password');
  });
});
