// The firmware images `serve --firmware DIR` serves for updates over the air: the newest version's offer,
// its bytes, a new image offered without a restart, and clear answers to what is not there.
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from '../../src/service';
import type { RunningService } from '../../src/service';
import { compareVersions } from '../../src/service/firmware';

let service: RunningService | null = null;
afterEach(async () => {
  await service?.close();
  service = null;
});

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('serve --firmware DIR', () => {
  it('offers the newest image by version and serves its bytes; a new image is offered at once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'firmware-'));
    const old = Buffer.alloc(70_000, 1), current = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));
    writeFileSync(join(dir, '1.9.0.bin'), old);
    writeFileSync(join(dir, '1.10.0.bin'), current);
    writeFileSync(join(dir, 'notes.txt'), 'not an image');
    service = await startService({ firmwareDir: dir });
    const offer = (await (await fetch(service.url + '/firmware')).json()) as { url: string };
    expect(offer).toEqual({ version: '1.10.0', bytes: current.length, sha256: sha256(current), url: '/firmware/1.10.0.bin' });
    const image = await fetch(service.url + offer.url);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-length')).toBe(String(current.length));
    expect(Buffer.from(await image.arrayBuffer()).equals(current)).toBe(true);
    expect(Buffer.from(await (await fetch(service.url + '/firmware/1.9.0.bin')).arrayBuffer()).equals(old)).toBe(true);
    const next = Buffer.alloc(1000, 7);
    writeFileSync(join(dir, '1.10.1.bin'), next);
    expect(await (await fetch(service.url + '/firmware')).json()).toMatchObject({ version: '1.10.1', sha256: sha256(next) });
  });

  it('answers 404 for an image that is not there and for a folder with none, 405 for another method', async () => {
    service = await startService({ firmwareDir: mkdtempSync(join(tmpdir(), 'firmware-')) });
    const none = await fetch(service.url + '/firmware');
    expect([none.status, ((await none.json()) as { message: string }).message]).toEqual([404, 'no firmware image is served (the folder holds no <version>.bin)']);
    expect((await fetch(service.url + '/firmware/2.0.0.bin')).status).toBe(404);
    expect((await fetch(service.url + '/firmware/../../etc/passwd')).status).toBe(404);
    const post = await fetch(service.url + '/firmware', { method: 'POST' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET']);
  });

  it('is not there without --firmware, and a folder that is missing is an error at start', async () => {
    service = await startService();
    expect((await fetch(service.url + '/firmware')).status).toBe(404);
    await expect(startService({ firmwareDir: '/nonexistent/firmware' })).rejects.toThrow(/nonexistent/);
  });
});

describe('compareVersions', () => {
  it('orders by number where there are numbers', () => {
    expect(['1.10.0', '1.9.2', '2.0', '2.0-rc1', '1.9.10', 'a'].sort(compareVersions)).toEqual(['a', '1.9.2', '1.9.10', '1.10.0', '2.0-rc1', '2.0']);
  });
});
