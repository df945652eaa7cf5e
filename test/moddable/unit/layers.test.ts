// platforms/moddable in layers (issue 40): the firmware application on top; the adapter's entry beside it;
// the host, the flash storage and the peripherals side by side, none importing another; the boards below
// the firmware, on the peripherals. Every folder may import the core. An import that runs another way
// fails here, naming the file and what it imports.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = dirname(dirname(dirname(dirname(fileURLToPath(import.meta.url)))));
const MODDABLE = 'platforms/moddable';

/** What each part of platforms/moddable may import besides itself and src/core ('.': index.ts, modules.ts). */
const MAY_IMPORT: Record<string, string[]> = {
  firmware: ['.', 'host', 'storage', 'peripherals'],
  '.': ['host', 'storage'],
  host: [],
  storage: [],
  peripherals: [],
  // A board is compiled as firmware/board, so it reaches the peripherals as the firmware does.
  esp32: ['peripherals'],
  lin: ['peripherals'],
  rp2040: ['peripherals'],
};

/** The part of platforms/moddable a file belongs to, or its path when it lies outside. */
function partOf(file: string): string {
  const inside = relative(MODDABLE, file);
  if (inside.startsWith('..')) return file;
  return inside.includes('/') ? inside.slice(0, inside.indexOf('/')) : '.';
}

/** Whether `from` may import `to` (both relative to the root). */
function allowed(from: string, to: string): boolean {
  if (to.startsWith('src/core/')) return true;
  const [a, b] = [partOf(from), partOf(to)];
  return a === b || (MAY_IMPORT[a] ?? []).includes(b);
}

function tsFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder)).flatMap((name) => {
    const path = folder + '/' + name;
    if (statSync(join(ROOT, path)).isDirectory()) return tsFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

describe('platforms/moddable in layers', () => {
  it('has a rule for every folder in it', () => {
    const folders = readdirSync(join(ROOT, MODDABLE)).filter((name) => statSync(join(ROOT, MODDABLE, name)).isDirectory());
    expect(folders.sort()).toEqual(Object.keys(MAY_IMPORT).filter((part) => part !== '.').sort());
  });

  it('imports only down: the firmware on the adapter, the host, storage and peripherals on the core alone', () => {
    const wrong: string[] = [];
    for (const file of tsFiles(MODDABLE)) {
      for (const imported of ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8')).importedFiles) {
        if (!imported.fileName.startsWith('.')) continue; // the SDK's modules
        const to = relative(ROOT, resolve(ROOT, dirname(file), imported.fileName));
        if (!allowed(file, to)) wrong.push(file + ' → ' + to);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('refuses an import that runs across or up', () => {
    expect(allowed(MODDABLE + '/storage/flash-queue.ts', MODDABLE + '/host/sdk')).toBe(false);
    expect(allowed(MODDABLE + '/host/host.ts', MODDABLE + '/firmware/settings')).toBe(false);
    expect(allowed(MODDABLE + '/peripherals/open.ts', 'platforms/node/host')).toBe(false);
    expect(allowed(MODDABLE + '/firmware/main.ts', MODDABLE + '/storage/flash-queue')).toBe(true);
  });
});
