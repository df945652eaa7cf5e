// The firmware against a platform it does not control (issue 24): manifest.json built for lin with each
// HTTP host (keep-alive, the default, and http=classic), both run at once in mcsim (each with its own
// XDG_CONFIG_HOME: rig.ts) against the real local service behind a proxy that plays the platform
// (platform-proxy.ts). An uptime sensor every second makes a gap (a lost reading) or a repeat (one
// stored twice) visible in the stored sequence. Cases:
// chunked answers and answers a byte at a time are acknowledged; answers of 64 KB and 1 MB abort nothing
// and lose nothing; two boots draw different waits; after an outage of 500s or resets the device tries
// again within the bound of docs/architecture.md; a 307 to the same origin is followed and any other
// redirect is said once, naming its Location, with the token sent nowhere else and no reading lost.
// Runs where the SDK is installed (MODDABLE set, its tools built, xvfb-run present); skipped elsewhere.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resumeBound } from '../../src/core/requests/backoff';
import { UPLINK_DEFAULTS } from '../../src/core/config';
import { PlatformProxy } from './platform-proxy';
import type { Play } from './platform-proxy';
import { HOSTS, ROOT, Rig, both as bothOf, sleep } from './rig';
import type { Status } from './status-line';
import { findSdk } from './sdk';
import type { Sdk } from './sdk';

const sdk = findSdk(ROOT);
/** The flush period at the defaults, the pace of every phase below. */
const FLUSH_MS = UPLINK_DEFAULTS.flushMs;
/** mcsim's own delays (its timers, the trace through a pipe) on this shared machine. */
const SLACK_MS = 2_500;

/** The longest wait after an outage of `ms` at the defaults (docs/architecture.md, "What counts as an attempt"). */
function longestWaitAfter(ms: number): number {
  return resumeBound({ baseMs: UPLINK_DEFAULTS.backoffBaseMs, capMs: UPLINK_DEFAULTS.backoffCapMs }, ms);
}

if (typeof sdk === 'string') console.log('platform tests skipped: ' + sdk);

describe.skipIf(typeof sdk === 'string')('the firmware against a platform it does not control (lin build, both HTTP hosts at once)', () => {
  let dir = '';
  let rigs: Rig<PlatformProxy>[] = [];
  /** Runs `phase` on both hosts at once; once both ended, fails with what failed on each. */
  const both = (phase: (rig: Rig<PlatformProxy>) => Promise<void>): Promise<void> => bothOf(rigs, phase);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'feed-agent-platform-'));
    rigs = HOSTS.map((host) => {
      mkdirSync(join(dir, host, 'config'), { recursive: true });
      return new Rig(host, join(dir, host), sdk as Sdk, async (upstream) => {
        const front = await PlatformProxy.start(upstream);
        return { front, url: front.url };
      });
    });
    await both((rig) => rig.start());
    // One after the other, in one output folder: the machine is shared, and the second build is short.
    // A fixed folder under node_modules/.cache: mcconfig compiles the SDK's C only once there.
    for (const rig of rigs) rig.build(join(ROOT, 'node_modules', '.cache', 'feed-agent-platform-test'));
    await both((rig) => rig.boot());
    await both((rig) => rig.until('uptime feeds stored', () => rig.uptimes.length >= 5, 40_000));
  }, 1_200_000);

  afterAll(async () => {
    await both((rig) => rig.stop());
    rmSync(dir, { recursive: true, force: true });
  });

  /** Plays `play` for `ms`, then passes again; answers what the status line said before and after. */
  const playFor = async (rig: Rig<PlatformProxy>, play: Play, ms: number): Promise<{ before: Status; after: Status; from: number }> => {
    const before = rig.status();
    const from = Date.now();
    rig.front.play = play;
    await sleep(ms);
    rig.front.play = { do: 'pass' };
    return { before, after: rig.status(), from };
  };

  // A byte at a time, each answer says Connection: close: the keep-alive host then opens a new connection.
  for (const [name, play, unwelcome] of [
    ['chunked answers (Transfer-Encoding: chunked, several chunks in one read)', { do: 'chunked' }, /no request was reading|link: connection/],
    ['answers that arrive a byte at a time', { do: 'bytes' }, /no request was reading/],
  ] as const) {
    it(name + ' are acknowledged: no retry, nothing lost or stored twice', async () => {
      await both(async (rig) => {
        const stored = rig.uptimes.length;
        const lines = rig.lineCount;
        const { before, after, from } = await playFor(rig, play, 2 * FLUSH_MS + SLACK_MS);
        const batches = rig.front.since(from, 'create').filter((t) => t.played === play.do);
        expect(batches.length, rig.host + ': batches answered so').toBeGreaterThanOrEqual(2);
        expect(after.retries, rig.host + ': retries').toBe(before.retries);
        expect(after.sent, rig.host + ': sent').toBeGreaterThan(before.sent);
        expect(rig.uptimes.length - stored, rig.host + ': readings stored meanwhile').toBeGreaterThanOrEqual(15);
        expect(rig.traced(lines, unwelcome), rig.host).toEqual([]);
        rig.expectWhole();
      });
    }, 120_000);
  }

  it('answers of 64 KB and 1 MB to a batch abort nothing: each is garbled, read back, and nothing is lost or stored twice', async () => {
    await both(async (rig) => {
      const lines = rig.lineCount;
      for (const play of [
        { do: 'large', bytes: 65_536, chunked: false },
        { do: 'large', bytes: 1_048_576, chunked: false },
        { do: 'large', bytes: 1_048_576, chunked: true },
      ] as const) {
        const from = Date.now();
        rig.front.play = play;
        await rig.until('a batch answered with ' + play.bytes + ' bytes', () => rig.front.since(from, 'create').some((t) => t.played === 'large'), FLUSH_MS + 5 * SLACK_MS);
        rig.front.play = { do: 'pass' };
        const stored = rig.uptimes.length;
        await rig.until('deliveries after it', () => rig.uptimes.length >= stored + 5, 3 * FLUSH_MS);
        rig.expectWhole();
      }
      expect(rig.traced(lines, /answer longer than \d+ bytes/).length, rig.host + ': the garbled answers, said').toBeGreaterThanOrEqual(1);
    });
  }, 300_000);

  for (const [name, play, ms] of [
    ['20 s of 500s', { do: 'status', status: 500 }, 20_000],
    ['10 s of resets', { do: 'reset' }, 10_000],
  ] as const) {
    it('after ' + name + ' the device tries again within the bound of docs/architecture.md, losing nothing', async () => {
      await both(async (rig) => {
        const { from } = await playFor(rig, play, ms);
        const ended = from + ms;
        const bound = longestWaitAfter(ms);
        await rig.until('a batch after the outage', () => rig.front.since(ended, 'create').some((t) => t.played === 'pass'), bound + 4 * SLACK_MS);
        const resumed = (rig.front.since(ended, 'create').find((t) => t.played === 'pass') as { at: number }).at - ended;
        console.log(rig.host + ': resumed ' + resumed + ' ms after ' + name + ' (bound ' + bound + ' ms)');
        expect(resumed, rig.host + ': ms from the end of the outage to the next batch').toBeLessThanOrEqual(bound + SLACK_MS);
        const stored = rig.uptimes.length;
        await rig.until('the outage delivered', () => rig.uptimes.length >= stored + 5, 3 * FLUSH_MS);
        rig.expectWhole();
      });
    }, 240_000);
  }

  it('follows a 307 to its own origin with the same batch and token', async () => {
    await both(async (rig) => {
      const lines = rig.lineCount;
      const stored = rig.uptimes.length;
      const { from } = await playFor(rig, { do: 'redirect', status: 307, to: 'same' }, 2 * FLUSH_MS + SLACK_MS);
      const moved = rig.front.since(from, 'create').filter((t) => t.played === 'moved');
      expect(moved.length, rig.host + ': batches sent again where the 307 said').toBeGreaterThanOrEqual(2);
      expect(moved.every((t) => t.token), rig.host).toBe(true);
      expect(rig.uptimes.length - stored, rig.host + ': readings stored meanwhile').toBeGreaterThanOrEqual(15);
      expect(rig.traced(lines, /paused|redirect/i), rig.host).toEqual([]);
      rig.expectWhole();
    });
  }, 120_000);

  it('says a redirect to another origin once, naming it; the token goes nowhere else and nothing queued is dropped', async () => {
    await both(async (rig) => {
      const lines = rig.lineCount;
      rig.front.play = { do: 'redirect', status: 307, to: 'other' };
      const from = Date.now();
      await rig.until('a batch redirected', () => rig.front.since(from, 'create').some((t) => t.played === 'redirect'), FLUSH_MS + 5 * SLACK_MS);
      await sleep(FLUSH_MS);
      // The status line (every 2 s here) repeats the last error as a state; what is said is the event.
      const said = new RegExp('^(?!feed-agent: queued ).*' + rig.front.otherUrl.replace(/[.]/g, '\\.'));
      expect(rig.traced(lines, said), rig.host + ': lines naming the Location, status lines aside').toHaveLength(1);
      expect(rig.front.elsewhere.filter((r) => r.token), rig.host + ': requests with the token at the other origin').toEqual([]);
      const { queued, dropped } = rig.status();
      expect(queued, rig.host + ': readings kept queued').toBeGreaterThan(5);
      expect(dropped, rig.host).toBe(0);
      rig.expectWhole();
    });
  }, 120_000);
  // Last: it reboots the devices, and a new boot's uptime starts again from 0.
  it('two boots draw different waits: the start jitter and the backoff come from a seed of the board', async () => {
    await both(async (rig) => {
      const waits: number[][] = [];
      for (let boot = 0; boot < 2; boot++) {
        rig.front.play = { do: 'status', status: 500 };
        await rig.boot();
        const from = rig.bootedAt;
        await rig.until('six batches refused', () => rig.front.since(from, 'create').length >= 6, 120_000);
        const at = rig.front.since(from, 'create').slice(0, 6).map((t) => t.at);
        // The first wait is the start jitter (from the first request of the boot), then five backoffs: two
        // boots of one seed differ by the scheduling's noise alone; with five draws, two seeds were once all
        // closer than 400 ms by chance (largest 368 ms), so one draw more.
        waits.push([at[0] - rig.front.since(from)[0].at, ...at.slice(1).map((t, i) => t - at[i])]);
      }
      rig.front.play = { do: 'pass' };
      const apart = waits[0].map((w, i) => Math.abs(w - waits[1][i]));
      expect(Math.max(...apart), rig.host + ': waits of the two boots, ' + JSON.stringify(waits)).toBeGreaterThan(400);
    });
  }, 300_000);

});
