// The device realm of the XS harness (device-realm.ts): the scenarios and probes only prove the core
// loads on a Moddable build if the worker really refuses what the device refuses, and allows the rest.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { XsWorker, topLevelBindings } from './harness';

let worker: XsWorker;
let outcomes: Record<string, string>;

beforeAll(async () => {
  worker = await XsWorker.load('realm', new URL('./fixtures/realm-entry.ts', import.meta.url), { preloaded: /preloaded-module\.ts$/ });
  outcomes = (await worker.call('realmOutcomes')) as Record<string, string>;
});

afterAll(() => worker?.close());

describe('the device realm of the XS harness', () => {
  it('refuses the override mistake, as a Moddable build does', () => {
    expect(outcomes.errorPrototypeName).toMatch(/TypeError: .*name: not writable/);
    expect(outcomes.nameInConstructor).toMatch(/TypeError: .*name: not writable/);
    expect(outcomes.nameByGetter).toBe('ok');
  });

  it('freezes the built-ins, but leaves the global object open', () => {
    expect(outcomes.builtinPatch).toMatch(/^TypeError/);
    expect(outcomes.addGlobal).toBe('ok');
    expect(outcomes.newMap).toBe('ok');
  });

  it('leaves a preloaded module as preload does', () => {
    expect(worker.preload.modules).toEqual([expect.stringMatching(/preloaded-module\.ts$/)]);
    // As the XS linker warns "not frozen": the plain object (and nothing of the class, the Map, ...).
    expect(worker.preload.aliasable).toEqual([expect.stringMatching(/preloaded-module\.ts: plain$/)]);
    expect(outcomes.mapSet).toMatch(/^TypeError: set: read-only/);
    expect(outcomes.mapGet).toBe('ok');
    expect(outcomes.setAdd).toMatch(/^TypeError: add: read-only/);
    expect(outcomes.typedArrayFill).toMatch(/^TypeError: fill: read-only/);
    expect(outcomes.staticField).toMatch(/^TypeError/);
    // A preloaded RegExp crashes XS 8.2.3 under a garbage collection: the realm refuses to match with it.
    expect(outcomes.preloadedRegExp).toMatch(/preloaded-module\.ts: pattern: a preloaded RegExp crashes/);
    expect(outcomes.preloadedRegExpReplace).toMatch(/a preloaded RegExp crashes/);
    expect(outcomes.regExpInFunction).toBe('ok');
    // Aliasable on the device: writable.
    expect(outcomes.plainObject).toBe('ok');
    expect(outcomes.letBinding).toBe('ok');
  });

  it('finds nothing aliasable in the core, the adapter and the firmware (the XS linker would warn "not frozen")', async () => {
    const device = await XsWorker.load('device-modules', new URL('./fixtures/device-modules-entry.ts', import.meta.url));
    try {
      expect(device.preload.modules.length).toBeGreaterThanOrEqual(25);
      expect(device.preload.aliasable).toEqual([]);
    } finally {
      await device.close();
    }
  });

  it('finds every top-level value binding of a module, and no type', () => {
    const source = [
      'import { x } from "y";',
      'export type T = number;',
      'interface I { a: number }',
      'declare const ambient: number;',
      'const a = 1, { b, c: [d] } = f();',
      'export let e = 2;',
      'function f(): any { return {}; }',
      'export function g(): void;',
      'export function g(): void {}',
      'class H {}',
      'export default 3;',
    ].join('\n');
    expect(topLevelBindings(source, 'm.ts')).toEqual(['a', 'b', 'd', 'e', 'f', 'g', 'H']);
  });
});
