// The firmware's updates over the air (platforms/moddable/firmware/update.ts) on stand-ins for the SDK's
// OTA writer, Request and Preference, over a virtual clock: the checks of the source's offer, the
// download's verification, the trial of a new image, and the memory of a version that gave way. The
// emulated ESP32 runs the real thing (test/firmware/fleet.test.ts).
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { HttpRequest, HttpResult } from '../../../src/core/host/host';
import { HEADER, RESPONSE_COMPLETE, RESPONSE_FRAGMENT, STATUS } from '../../../platforms/moddable/host/sdk';
import type { RequestOptions } from '../../../platforms/moddable/host/sdk';
import { readOffer, Updater } from '../../../platforms/moddable/firmware/update';
import type { UpdateParts } from '../../../platforms/moddable/firmware/update';
import { VirtualClock } from '../../support/virtual-clock';

const SOURCE = 'http://10.0.2.101/firmware';
const IMAGE = new Uint8Array(200_000).map((_, i) => (i * 7) % 256);
const SHA = createHash('sha256').update(IMAGE).digest('hex');

/** A device: its slots, its preference store and what it said, the source's answers and the image's bytes. */
function device(options: { pending?: boolean; offer?: object; image?: Uint8Array; sent?: number } = {}) {
  const clock = new VirtualClock();
  const said: string[] = [];
  const store = new Map<string, string>();
  const events: string[] = [];
  let sent = options.sent ?? 0;
  let written = 0;
  const writes: number[] = [];
  const image = options.image ?? IMAGE;
  const parts: UpdateParts = {
    Timer: {
      set: (fn, ms) => clock.setTimer(ms, fn),
      repeat: (fn, ms) => {
        const id = { current: 0 as unknown };
        const again = (): void => {
          id.current = clock.setTimer(ms, () => (again(), fn()));
        };
        again();
        return id;
      },
      clear: (id) => clock.clearTimer((id as { current: number }).current ?? id),
    },
    // The SDK's Request: answers the image in fragments of a TCP segment's 1,460 bytes, one per millisecond.
    Request: class {
      callback: (message: number, value?: unknown, etc?: unknown) => void = () => {};
      private at = 0;
      constructor(readonly o: RequestOptions) {
        events.push('GET ' + o.host + ':' + o.port + o.path);
        clock.setTimer(1, () => this.next(true));
      }
      private next(first: boolean): void {
        if (first) {
          this.callback(STATUS, 200);
          this.callback(HEADER, 'content-length', String(image.length));
        }
        if (this.at >= image.length) return void this.callback(RESPONSE_COMPLETE);
        this.callback(RESPONSE_FRAGMENT, Math.min(1460, image.length - this.at));
        clock.setTimer(1, () => this.next(false));
      }
      read(_: unknown, count: number): ArrayBuffer {
        const bytes = image.slice(this.at, this.at + count);
        this.at += count;
        return bytes.buffer;
      }
      close(): void {
        events.push('close');
      }
    } as unknown as UpdateParts['Request'],
    slots: {
      pendingVerify: () => options.pending === true,
      confirm: () => events.push('confirm'),
      rollBack: () => events.push('roll back'),
      restart: () => events.push('restart'),
    },
    openOta: () => ({
      write: (bytes) => void (written += bytes.byteLength, writes.push(bytes.byteLength)),
      cancel: () => events.push('cancel'),
      complete: () => events.push('complete ' + written),
    }),
    sha256: () => {
      const hash = createHash('sha256');
      return { write: (b) => void hash.update(new Uint8Array(b)), close: () => new Uint8Array(hash.digest()).buffer };
    },
    preference: {
      get: (_, key) => store.get(key),
      set: (_, key, value) => void store.set(key, value),
      delete: (_, key) => void store.delete(key),
    },
    host: {
      now: clock.now,
      setTimer: clock.setTimer,
      clearTimer: clock.clearTimer,
      request: async (req: HttpRequest): Promise<HttpResult> => {
        events.push('check ' + req.url);
        return { kind: 'response', status: 200, body: JSON.stringify(options.offer ?? { version: '1.1.0', bytes: IMAGE.length, sha256: SHA, url: '/firmware/1.1.0.bin' }) } as HttpResult;
      },
    },
    agent: { stats: () => ({ sent }), persist: () => (events.push('persist'), 0) },
    random: () => 0.5,
    say: (text) => said.push(text),
  };
  const settings = { source: SOURCE, version: '1.0.0', everyMs: 60_000, trialMs: 30_000, backoff: { baseMs: 1000, capMs: 60_000 } };
  return { clock, said, store, events, writes, parts, settings, deliver: () => (sent = 1) };
}

describe('Updater', () => {
  it('downloads another version into the other slot, checks it, and restarts into it with the queue on flash', async () => {
    const d = device();
    new Updater(d.parts, d.settings).start();
    await d.clock.advance(1000);
    expect(d.events).toEqual(['check ' + SOURCE, 'GET 10.0.2.101:80/firmware/1.1.0.bin', 'complete ' + IMAGE.length, 'persist', 'restart']);
    expect(d.store.get('tried')).toBe('1.1.0');
    // Whole flash sectors, whatever the fragments: the last one short.
    expect(d.writes.slice(0, -1).every((n) => n === 4096)).toBe(true);
    expect(d.writes.reduce((a, b) => a + b, 0)).toBe(IMAGE.length);
    expect(d.said).toEqual(['update: 1.0.0 runs; ' + SOURCE + ' is asked every 60 s', 'update: 1.1.0 offered, 200000 bytes: downloading', 'update: 65700 of 200000 bytes', 'update: 131400 of 200000 bytes', 'update: 197100 of 200000 bytes', 'update: 1.1.0 written to the other slot; restarting into it']);
  });

  it('cancels an image whose digest is not the one offered, and asks again after a backoff', async () => {
    const d = device({ offer: { version: '1.1.0', bytes: IMAGE.length, sha256: '0'.repeat(64), url: '/firmware/1.1.0.bin' } });
    new Updater(d.parts, d.settings).start();
    await d.clock.advance(500);
    expect(d.events.slice(-2)).toEqual(['cancel', 'close']);
    expect(d.said[d.said.length - 1]).toBe('update: 1.1.0: SHA-256 ' + SHA + ', the source said ' + '0'.repeat(64) + '; again in 1 s');
    expect(d.store.has('tried')).toBe(false);
    await d.clock.advance(1000);
    expect(d.events.filter((e) => e.startsWith('check')).length).toBe(2);
    // The offer is read each time, and still each failed download waits longer than the one before.
    await d.clock.advance(600_000);
    const waits = d.said.filter((l) => l.includes('again in')).map((l) => Number(/again in (\d+) s/.exec(l)![1]));
    expect(waits.length).toBeGreaterThan(4);
    expect(waits.every((w, i) => i === 0 || w >= waits[i - 1] || w >= 30)).toBe(true);
    expect(Math.max(...waits)).toBeGreaterThanOrEqual(30);
  });

  it('leaves its own version alone, and one that gave way here before', async () => {
    const d = device({ offer: { version: '1.0.0', bytes: 10, sha256: SHA, url: '/x.bin' } });
    new Updater(d.parts, d.settings).start();
    await d.clock.advance(120_000);
    expect(d.events).toEqual(['check ' + SOURCE, 'check ' + SOURCE, 'check ' + SOURCE]);
    const back = device();
    back.store.set('tried', '1.1.0');
    new Updater(back.parts, back.settings).start();
    await back.clock.advance(1000);
    expect(back.said[0]).toBe('update: 1.1.0 did not confirm itself; 1.0.0 runs again, and 1.1.0 is not taken again');
    expect(back.events).toEqual(['check ' + SOURCE]);
    expect([back.store.get('failed'), back.store.has('tried')]).toEqual(['1.1.0', false]);
  });

  it('on trial, confirms itself once a batch is delivered, or gives way after the trial', async () => {
    const d = device({ pending: true });
    d.store.set('tried', '1.0.0');
    new Updater(d.parts, d.settings).start();
    await d.clock.advance(5000);
    expect(d.events).toEqual([]);
    d.deliver();
    await d.clock.advance(1000);
    expect(d.events[0]).toBe('confirm');
    expect(d.said.slice(0, 3)).toEqual(['update: 1.0.0 on trial: it confirms itself once it has delivered a batch', 'update: 1.0.0 confirmed', 'update: 1.0.0 runs; ' + SOURCE + ' is asked every 60 s']);
    expect(d.store.has('tried')).toBe(false);
    const broken = device({ pending: true });
    new Updater(broken.parts, broken.settings).start();
    await broken.clock.advance(29_000);
    expect(broken.events).toEqual([]);
    await broken.clock.advance(1000);
    expect(broken.events).toEqual(['persist', 'roll back']);
    expect(broken.said[1]).toBe('update: 1.0.0 delivered nothing in 30 s: back to the image before it');
  });
});

describe('readOffer', () => {
  it('takes a whole offer, the image\'s url on the source\'s host, and names what is wrong', () => {
    expect(readOffer(JSON.stringify({ version: '1.1.0', bytes: 5, sha256: SHA, url: '/firmware/1.1.0.bin' }), SOURCE)).toEqual({ version: '1.1.0', bytes: 5, sha256: SHA, url: 'http://10.0.2.101/firmware/1.1.0.bin' });
    expect(readOffer('<html>', SOURCE)).toBe('not JSON');
    expect(readOffer('{"version":"1","bytes":99999999,"sha256":"' + SHA + '","url":"/x"}', SOURCE)).toBe('bytes: expected a length up to 2097152');
    expect(readOffer('{"version":"1","bytes":9,"sha256":"ABC","url":"/x"}', SOURCE)).toBe('sha256: expected 64 lowercase hexadecimal digits');
    expect(readOffer('{"version":"../1","bytes":9,"sha256":"' + SHA + '","url":"/x"}', SOURCE)).toBe('version: expected 1 to 32 letters, digits, dots, dashes');
  });
});
