// Firmware images for updates over the air (docs/interface.md, "Firmware updates"): an extension of
// ours, beside the six operations and apart from them. `serve --firmware DIR` serves the images of DIR,
// each named by its version (`1.2.0.bin`): GET /firmware answers the newest one's offer (its version,
// length, SHA-256 and URL), GET /firmware/<version>.bin its bytes. A device compares the version with
// its own and checks the length and digest of what it downloads.
import { createHash } from 'node:crypto';
import { createReadStream, readdirSync, readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { HttpError } from './http';
import { allow, clip } from './routes';

export const FIRMWARE_PATH = '/firmware';
const IMAGE = /^([\w.+-]{1,32})\.bin$/;

export interface FirmwareOffer {
  version: string;
  bytes: number;
  sha256: string;
  url: string;
}

export interface FirmwareShelf {
  owns(url: string): boolean;
  /** The offer's JSON, or null when the image's bytes were sent. */
  answer(req: IncomingMessage, res: ServerResponse): string | null;
  /** The newest image's offer, or null when DIR has none. */
  newest(): FirmwareOffer | null;
}

/** The images of `dir`; it is read at every request, so that a new image is offered without a restart. */
export function firmwareShelf(dir: string): FirmwareShelf {
  statSync(dir); // a folder that is not there is the caller's error, said at start
  const digests = new Map<string, { mtimeMs: number; size: number; sha256: string }>();
  const offer = (version: string): FirmwareOffer => {
    const file = join(dir, version + '.bin');
    const stat = statSync(file);
    let known = digests.get(version);
    if (known === undefined || known.mtimeMs !== stat.mtimeMs || known.size !== stat.size) {
      known = { mtimeMs: stat.mtimeMs, size: stat.size, sha256: createHash('sha256').update(readFileSync(file)).digest('hex') };
      digests.set(version, known);
    }
    return { version, bytes: known.size, sha256: known.sha256, url: FIRMWARE_PATH + '/' + version + '.bin' };
  };
  const newest = (): FirmwareOffer | null => {
    const versions = readdirSync(dir).flatMap((name) => IMAGE.exec(name)?.[1] ?? []).sort(compareVersions);
    return versions.length === 0 ? null : offer(versions[versions.length - 1]);
  };
  return {
    owns: (url) => {
      const path = url.split('?')[0];
      return path === FIRMWARE_PATH || path.startsWith(FIRMWARE_PATH + '/');
    },
    newest,
    answer: (req, res) => {
      allow(req.method ?? '', 'GET');
      const path = (req.url ?? '').split('?')[0];
      if (path === FIRMWARE_PATH) {
        const found = newest();
        if (found === null) throw new HttpError(404, 'no firmware image is served (the folder holds no <version>.bin)');
        return JSON.stringify(found);
      }
      const m = IMAGE.exec(path.slice(FIRMWARE_PATH.length + 1));
      let image: FirmwareOffer;
      try {
        if (m === null) throw new Error();
        image = offer(m[1]);
      } catch {
        throw new HttpError(404, 'there is no firmware image at ' + JSON.stringify(clip(path)));
      }
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': String(image.bytes) });
      createReadStream(join(dir, image.version + '.bin')).pipe(res);
      return null;
    },
  };
}

/** Versions by their numbers where they have them: 1.10.0 after 1.9.2, 2.0 after 2.0-rc1. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.+-]/), pb = b.split(/[.+-]/);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i], y = pb[i];
    if (x === undefined) return y !== undefined && /^\d+$/.test(y) ? -1 : 1;
    if (y === undefined) return /^\d+$/.test(x) ? 1 : -1;
    const nx = /^\d+$/.test(x), ny = /^\d+$/.test(y);
    const d = nx && ny ? Number(x) - Number(y) : nx ? 1 : ny ? -1 : x < y ? -1 : x > y ? 1 : 0;
    if (d !== 0) return d;
  }
  return 0;
}
