// The ESP32's updates over the air (update.ts) on the SDK's modules: Preference, Timer, the classic
// Request, and the app slots with the OTA writer and the digest (ota-slot.d.ts). Only the esp32 build has
// this module (manifest.json); main.ts starts it where it is.
import Preference from 'preference';
import Timer from 'timer';
import type { Host } from '../../../src/core/host/host';
import { sdk } from '../modules';
import { confirm, openOta, pendingVerify, restart, rollBack, sha256 } from './ota-slot';
import { Updater } from './update';
import type { UpdateParts, UpdateSettings } from './update';

export function startUpdates(host: Host, agent: UpdateParts['agent'], settings: UpdateSettings, random: () => number, say: (text: string) => void): void {
  new Updater(
    {
      Request: sdk.Request,
      Timer: Timer as unknown as UpdateParts['Timer'],
      slots: { pendingVerify, confirm, rollBack, restart },
      openOta,
      sha256,
      preference: Preference,
      host,
      agent,
      random,
      say,
    },
    settings,
  ).start();
}

/**
 * A new image on trial that cannot start (a bad setting, an agent that cannot be made) gives way at once:
 * it would deliver nothing until a reset, and its Updater, which counts the trial, never starts.
 */
export function giveWayOnTrial(version: string, say: (text: string) => void): void {
  if (!pendingVerify()) return;
  say('update: ' + version + ' cannot start on trial: back to the image before it');
  rollBack();
}
