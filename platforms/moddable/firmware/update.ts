// Updates over the air on the ESP32 (docs/firmware.md, "Updates"). The device asks its update source (the
// `update` URL a fleet provisions: `feed-agent serve --firmware DIR` serves one) what the current image is,
// now and then, with the one backoff after a failure. An image of another version, not one that failed
// here before, is downloaded in fragments into the other app slot while its SHA-256 is computed; when the
// length and the digest are what the source said, the slot becomes the boot slot and the device restarts,
// its queue written to flash first (the backlog lives in its own partition, which an update leaves alone).
// The new image starts on trial and confirms itself once it has delivered a batch to the service; one
// that delivers nothing within `trialMs` restarts into the image before it, as one that resets before
// confirming does (the bootloader's rollback).
import type { Host } from '../../../src/core/host/host';
import type { Ladder } from '../../../src/core/requests/backoff';
import { RetryLadder } from '../../../src/core/requests/retry-ladder';
import { errorText } from '../../../src/core/wire/errors';
import type { RequestClass, SdkRequest, TimerModule } from '../host/sdk';
import { HEADER, RESPONSE_COMPLETE, RESPONSE_FRAGMENT, STATUS } from '../host/sdk';

/** The app slots (ota-slot.d.ts). */
export interface Slots {
  pendingVerify(): boolean;
  confirm(): void;
  rollBack(): void;
  restart(): void;
}

/** The SDK's OTA writer: the next slot, erased as it is written; complete() makes it the boot slot. */
export interface OtaWriter {
  write(bytes: ArrayBuffer): void;
  cancel(): void;
  complete(): void;
}

export interface UpdateParts {
  Request: RequestClass;
  Timer: TimerModule & { repeat(callback: () => void, ms: number): unknown };
  slots: Slots;
  openOta(): OtaWriter;
  /** A SHA-256 digest (the SDK's crypt Digest). */
  sha256(): { write(bytes: ArrayBuffer): void; close(): ArrayBuffer };
  /** The preference store, where the version on trial and a version that failed are kept across restarts. */
  preference: { get(domain: string, key: string): unknown; set(domain: string, key: string, value: string): void; delete(domain: string, key: string): void };
  host: Host;
  /** The agent: its count of delivered samples, and the write of its queue to flash before a restart. */
  agent: { stats(): { sent: number }; persist(): number };
  random: () => number;
  say(text: string): void;
}

export interface UpdateSettings {
  /** The update source's URL; '' for none. */
  source: string;
  /** This image's version (`version`, mcconfig key). */
  version: string;
  /** How often the source is asked when it answers (`updateEvery`). */
  everyMs: number;
  /** How long a new image has to deliver a batch before it gives way to the one before it (`updateTrial`). */
  trialMs: number;
  backoff: Ladder;
}

/** What the update source answers (docs/interface.md, "Firmware updates"). */
export interface ImageOffer {
  version: string;
  bytes: number;
  sha256: string;
  url: string;
}

const DOMAIN = 'feed-agent-ota';
/** An image larger than an app slot (1.375 MB on 4 MB) cannot be taken; the source's word is not trusted beyond it. */
const MOST_BYTES = 0x200000;
const OFFER_BYTES = 1024;
const REQUEST_MS = 10_000;
/** A download that receives nothing for this long is given up (a blackholed connection). */
const STALL_MS = 30_000;
const PROGRESS_EVERY = 64 * 1024;
/**
 * The slot is written a flash sector at a time: the fragments of a download fall anywhere, and in QEMU's
 * esp32 machine a write that ended a few bytes short of a sector's end, before the next sector was
 * erased, left those bytes erased in the slot.
 */
const SECTOR = 4096;

export class Updater {
  private readonly ladder: RetryLadder;

  constructor(
    private readonly parts: UpdateParts,
    private readonly settings: UpdateSettings,
  ) {
    this.ladder = new RetryLadder(settings.backoff, null, parts.random);
  }

  /** At start: a new image waits for its first delivery; an image that gave way is remembered; then the source is asked. */
  start(): void {
    const { parts, settings } = this;
    const tried = parts.preference.get(DOMAIN, 'tried');
    if (parts.slots.pendingVerify()) return this.trial();
    if (typeof tried === 'string' && tried !== settings.version) {
      parts.say('update: ' + tried + ' did not confirm itself; ' + settings.version + ' runs again, and ' + tried + ' is not taken again');
      parts.preference.set(DOMAIN, 'failed', tried);
    }
    if (tried !== undefined) parts.preference.delete(DOMAIN, 'tried');
    this.asking();
  }

  /** Says which image runs and where updates come from, then asks. */
  private asking(): void {
    const { settings } = this;
    if (settings.source === '') return;
    this.parts.say('update: ' + settings.version + ' runs; ' + settings.source + ' is asked every ' + Math.round(settings.everyMs / 1000) + ' s');
    this.later(0);
  }

  /** The image is new: it stays once the agent has delivered, or gives way after `trialMs`. */
  private trial(): void {
    const { parts, settings } = this;
    const started = parts.host.now();
    parts.say('update: ' + settings.version + ' on trial: it confirms itself once it has delivered a batch');
    const poll = parts.Timer.repeat(() => {
      if (parts.agent.stats().sent > 0) {
        parts.Timer.clear(poll);
        parts.slots.confirm();
        parts.preference.delete(DOMAIN, 'tried');
        parts.say('update: ' + settings.version + ' confirmed');
        this.asking();
      } else if (parts.host.now() - started >= settings.trialMs) {
        parts.Timer.clear(poll);
        parts.say('update: ' + settings.version + ' delivered nothing in ' + Math.round(settings.trialMs / 1000) + ' s: back to the image before it');
        parts.agent.persist();
        parts.slots.rollBack();
      }
    }, 1000);
  }

  private later(ms: number): void {
    if (this.settings.source === '') return;
    this.parts.Timer.set(() => void this.check(), ms);
  }

  private failed(why: string): void {
    const wait = this.ladder.fail(this.parts.host.now(), why);
    this.parts.say('update: ' + why + '; again in ' + Math.round(wait / 1000) + ' s');
    this.later(wait);
  }

  private async check(): Promise<void> {
    const { parts, settings } = this;
    const result = await parts.host.request({ method: 'GET', url: settings.source, headers: {}, timeoutMs: REQUEST_MS, maxResponseBytes: OFFER_BYTES });
    if (result.kind !== 'response') return this.failed('the update source: ' + result.kind);
    if (result.status !== 200) return this.failed('the update source answered ' + result.status);
    const offer = readOffer(result.body, settings.source);
    if (typeof offer === 'string') return this.failed('the update source\'s answer: ' + offer);
    // Only a source with nothing new ends the ladder: a download that fails again and again must wait
    // longer each time, though the offer before it was read.
    if (offer.version === settings.version || offer.version === parts.preference.get(DOMAIN, 'failed')) {
      this.ladder.succeed(parts.host.now());
      return this.later(settings.everyMs);
    }
    this.download(offer);
  }

  private download(offer: ImageOffer): void {
    const { parts } = this;
    const target = splitUrl(offer.url);
    if (target === null) return this.failed('the image\'s url is not http://host[:port]/path: ' + offer.url);
    parts.say('update: ' + offer.version + ' offered, ' + offer.bytes + ' bytes: downloading');
    let ota: OtaWriter;
    try {
      ota = parts.openOta();
    } catch (e) {
      return this.failed('the other slot cannot be written: ' + errorText(e));
    }
    const digest = parts.sha256();
    const sector = new Uint8Array(SECTOR);
    let filled = 0;
    let received = 0;
    let said = 0;
    let last = parts.host.now();
    let done = false;
    const finish = (why: string | null): void => {
      if (done) return;
      done = true;
      parts.Timer.clear(watch);
      if (why !== null) {
        ota.cancel();
        request.close();
        return this.failed(offer.version + ': ' + why);
      }
      try {
        ota.complete();
      } catch (e) {
        return this.failed(offer.version + ': the slot refused the image: ' + errorText(e));
      }
      parts.preference.set(DOMAIN, 'tried', offer.version);
      parts.say('update: ' + offer.version + ' written to the other slot; restarting into it');
      parts.agent.persist();
      parts.slots.restart();
    };
    /** Writes the sector's bytes so far to the slot; false when the slot refused them (the download is over). */
    const flush = (): boolean => {
      try {
        ota.write(filled === SECTOR ? sector.buffer : sector.slice(0, filled).buffer);
      } catch (e) {
        finish('the slot refused a write: ' + errorText(e));
        return false;
      }
      filled = 0;
      return true;
    };
    const watch = parts.Timer.repeat(() => {
      if (parts.host.now() - last >= STALL_MS) finish('nothing received for ' + STALL_MS / 1000 + ' s');
    }, 1000);
    const request: SdkRequest = new parts.Request({ host: target.host, port: target.port, path: target.path, method: 'GET', headers: [] });
    request.callback = function (message: number, value?: unknown, etc?: unknown): void {
      if (done) return;
      if (message === STATUS && value !== 200) finish('the image\'s url answered ' + String(value));
      else if (message === HEADER && value === 'content-length' && Number(etc) !== offer.bytes) finish('the image is ' + String(etc) + ' bytes, the source said ' + offer.bytes);
      else if (message === RESPONSE_FRAGMENT) {
        const bytes = request.read(ArrayBuffer, value as number);
        if (bytes === undefined) return;
        received += bytes.byteLength;
        last = parts.host.now();
        if (received > offer.bytes) return finish('more than the ' + offer.bytes + ' bytes the source said');
        digest.write(bytes);
        const from = new Uint8Array(bytes);
        for (let at = 0; at < from.length; ) {
          const n = Math.min(SECTOR - filled, from.length - at);
          sector.set(from.subarray(at, at + n), filled);
          filled += n;
          at += n;
          if (filled === SECTOR && !flush()) return;
        }
        if (received - said >= PROGRESS_EVERY) {
          said = received;
          parts.say('update: ' + received + ' of ' + offer.bytes + ' bytes');
        }
      } else if (message === RESPONSE_COMPLETE) {
        if (received !== offer.bytes) return finish(received + ' bytes received, the source said ' + offer.bytes);
        if (filled > 0 && !flush()) return;
        const sha = hex(digest.close());
        finish(sha === offer.sha256 ? null : 'SHA-256 ' + sha + ', the source said ' + offer.sha256);
      } else if (message < 0) finish('the download failed (' + message + ')');
    };
  }
}

/** The source's answer, checked: a version, a length within a slot, a SHA-256 in hex, the image's URL. */
export function readOffer(body: string, source: string): ImageOffer | string {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return 'not JSON';
  }
  const o = value as Partial<Record<keyof ImageOffer, unknown>>;
  if (typeof value !== 'object' || value === null) return 'not an object';
  if (typeof o.version !== 'string' || !/^[\w.+-]{1,32}$/.test(o.version)) return 'version: expected 1 to 32 letters, digits, dots, dashes';
  if (typeof o.bytes !== 'number' || !Number.isSafeInteger(o.bytes) || o.bytes <= 0 || o.bytes > MOST_BYTES) return 'bytes: expected a length up to ' + MOST_BYTES;
  if (typeof o.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(o.sha256)) return 'sha256: expected 64 lowercase hexadecimal digits';
  if (typeof o.url !== 'string') return 'url: expected text';
  const url = o.url.charAt(0) === '/' ? origin(source) + o.url : o.url;
  return { version: o.version, bytes: o.bytes, sha256: o.sha256, url };
}

function origin(url: string): string {
  const m = /^https?:\/\/[^/]+/.exec(url);
  return m === null ? '' : m[0];
}

/** http://host[:port]/path; the download is plain HTTP (its integrity is the SHA-256, its authenticity the source's). */
function splitUrl(url: string): { host: string; port: number; path: string } | null {
  const m = /^http:\/\/([^/:]+)(?::(\d+))?(\/.*)?$/.exec(url);
  if (m === null) return null;
  return { host: m[1], port: m[2] === undefined ? 80 : Number(m[2]), path: m[3] ?? '/' };
}

function hex(buffer: ArrayBuffer): string {
  const bytes = new Uint8Array(buffer);
  let text = '';
  for (let i = 0; i < bytes.length; i++) text += (bytes[i] < 16 ? '0' : '') + bytes[i].toString(16);
  return text;
}
