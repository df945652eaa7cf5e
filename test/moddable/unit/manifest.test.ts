// The manifests list their modules one by one (a wildcard would make a module of every file in a folder,
// tsconfig.json included), so a module added to the core or the adapter must be added there too, or the
// device build fails to link ("module not found"). This checks it without the SDK: the modules the
// manifests name are exactly those the firmware, the adapter's entry and the core's entry reach through
// imports that stay in the compiled code (not `import type`). A module declared by a `.d.ts` is native
// on every target: each platform's section maps it to a JavaScript file and its C.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { flashLayouts, layoutBacklogBytes, storageBytes } from '../../firmware/flash-layout';

const ROOT = dirname(dirname(dirname(dirname(fileURLToPath(import.meta.url)))));
const ENTRIES = ['platforms/moddable/firmware/main.ts', 'platforms/moddable/index.ts', 'src/core/index.ts'];
/** Modules main imports by name where the build has them (Modules.importNow): the ESP32's updates. */
const IMPORTED_BY_NAME: Record<string, string[]> = { esp32: ['platforms/moddable/firmware/update-esp32.ts'], lin: [] };
/** What an import of the SDK or of the app looks like: not a path of this project. */
const relativeImport = (specifier: string): boolean => specifier.startsWith('.');
/**
 * What littlefs keeps of each ESP32 layout's storage partition beyond the backlog's bound (docs/firmware.md,
 * "Flash layout"), as the bench measured it: 128 KiB on 4 MB (with three blocks left a fill ran littlefs out
 * of space); 192 KiB on 8 MB, whose directory of four times the segment files takes 16 blocks, so that the
 * turned-over bound leaves littlefs as many free blocks as on 4 MB (25; 9 with 128 KiB).
 */
const LITTLEFS_KEEPS: Record<string, number> = { '4mb': 128 * 1024, '8mb': 192 * 1024 };

/** The project files reached from `entries` through value imports and re-exports, relative to the root. */
function reached(entries: string[]): string[] {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.ES2020);
    for (const statement of source.statements) {
      let specifier: ts.Expression | undefined;
      if (ts.isImportDeclaration(statement) && !statement.importClause?.isTypeOnly) specifier = statement.moduleSpecifier;
      else if (ts.isExportDeclaration(statement) && !statement.isTypeOnly) specifier = statement.moduleSpecifier;
      if (specifier === undefined || !ts.isStringLiteral(specifier) || !relativeImport(specifier.text)) continue;
      // Imports naming only types are erased too, whatever their form.
      const clause = ts.isImportDeclaration(statement) ? statement.importClause : undefined;
      const bindings = clause?.namedBindings;
      if (clause && !clause.name && bindings && ts.isNamedImports(bindings) && bindings.elements.every((e) => e.isTypeOnly)) continue;
      const path = relative(ROOT, resolve(ROOT, dirname(file), specifier.text));
      if (existsSync(join(ROOT, path + '.d.ts'))) seen.add(path + '.d.ts');
      else visit(path + '.ts');
    }
  };
  entries.forEach(visit);
  return [...seen].sort();
}

interface Section {
  modules?: Record<string, string>;
  preload?: string | string[];
}

/**
 * The files a manifest's `modules` map to, with those of its section for `platform` (mcconfig adds them
 * to the others), relative to the root, and the modules not preloaded.
 */
function listed(manifest: string, platform: string): { files: string[]; notPreloaded: string[] } {
  const m = JSON.parse(readFileSync(join(ROOT, manifest), 'utf8')) as Section & { platforms?: Record<string, Section> };
  const sections = [m, m.platforms?.[platform] ?? {}];
  const preload = sections.flatMap((s) => s.preload ?? []);
  const files: string[] = [];
  const notPreloaded: string[] = [];
  for (const [name, path] of sections.flatMap((s) => Object.entries(s.modules ?? {}))) {
    if (!name.startsWith('feed-agent/')) continue;
    const file = relative(ROOT, resolve(ROOT, dirname(manifest), path));
    // A module of its own on every target, native (JavaScript and C) or TypeScript (firmware/board), stands
    // for the declaration under its name.
    const declared = name.slice('feed-agent/'.length) + '.d.ts';
    files.push(existsSync(join(ROOT, declared)) && (existsSync(join(ROOT, file + '.c')) || existsSync(join(ROOT, file + '.ts'))) ? declared : file + '.ts');
    if (!preload.includes(name)) notPreloaded.push(name);
  }
  return { files, notPreloaded };
}

describe('the Moddable manifests', () => {
  it.each(['esp32', 'lin'])('list exactly the modules the firmware reaches on %s, each under the name of its path, all preloaded', (platform) => {
    const adapter = listed('platforms/moddable/manifest.json', platform);
    const peripherals = listed('platforms/moddable/peripherals/manifest.json', platform);
    const app = listed('manifest.json', platform);
    // firmware/board is declared (firmware/board.d.ts) and each platform's file of it imports its own.
    const board = 'platforms/moddable/' + platform + '/board.ts';
    expect([...adapter.files, ...peripherals.files, ...app.files].sort()).toEqual(reached([...ENTRIES, ...IMPORTED_BY_NAME[platform], board]).filter((file) => file !== board));
    expect([...adapter.notPreloaded, ...peripherals.notPreloaded, ...app.notPreloaded]).toEqual([]);
    for (const manifest of ['platforms/moddable/manifest.json', 'platforms/moddable/peripherals/manifest.json', 'manifest.json']) {
      const m = JSON.parse(readFileSync(join(ROOT, manifest), 'utf8')) as { modules: Record<string, string> };
      for (const [name, path] of Object.entries(m.modules)) {
        // XS resolves a relative import against the importing module's name: names must mirror paths.
        if (name.startsWith('feed-agent/')) expect(name).toBe('feed-agent/' + relative(ROOT, resolve(ROOT, dirname(manifest), path)));
      }
    }
  });

  it('give the Wi-Fi builds (esp32 with FEED_AGENT_NET=wifi, pico/pico_w) our setup/network in place of the SDK\'s, with every module it reaches', () => {
    const wifi = 'platforms/moddable/firmware/wifi-setup.json';
    const app = JSON.parse(readFileSync(join(ROOT, 'manifest.json'), 'utf8')) as { platforms: Record<string, { include?: string }> };
    expect(app.platforms['pico/pico_w'].include).toBe('./' + wifi);
    expect((JSON.parse(readFileSync(join(ROOT, 'platforms/moddable/esp32/net-wifi.json'), 'utf8')) as { include: string }).include).toBe('../firmware/wifi-setup.json');
    const setup = JSON.parse(readFileSync(join(ROOT, wifi), 'utf8')) as { modules: Record<string, string | string[]> };
    expect(setup.modules['~']).toEqual(['$(BUILD)/devices/esp32/setup/network', '$(BUILD)/devices/pico/setup/network']);
    expect(setup.modules['setup/network']).toBe('./wifi-setup');
    const own = listed(wifi, 'esp32');
    expect(own.notPreloaded).toEqual([]);
    const all = ['platforms/moddable/manifest.json', 'platforms/moddable/peripherals/manifest.json', 'manifest.json'].flatMap((m) => listed(m, 'esp32').files).concat(own.files);
    for (const file of reached(['platforms/moddable/firmware/wifi-join.ts'])) expect(all).toContain(file);
    // setup/network is JavaScript that names our modules in full (a relative name would resolve under setup/).
    const names = [...readFileSync(join(ROOT, 'platforms/moddable/firmware/wifi-setup.js'), 'utf8').matchAll(/from "(feed-agent\/[^"]+)"/g)].map((m) => m[1].slice('feed-agent/'.length));
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) expect(all.map((f) => f.replace(/(\.d)?\.ts$/, ''))).toContain(name);
  });

  it('give pico/pico_w the modules of the ESP32, the temperature sensor\'s read from the RP2040 (JavaScript and C)', () => {
    const pico = listed('manifest.json', 'pico/pico_w');
    const fromRp2040 = (file: string): string => file.replace('platforms/moddable/rp2040/', 'platforms/moddable/firmware/');
    // Not the ESP32's updates over the air: the Pico W has no second slot (docs/firmware.md).
    const updates = ['platforms/moddable/firmware/ota-slot.d.ts', 'platforms/moddable/firmware/update-esp32.ts', 'platforms/moddable/firmware/update.ts'];
    expect(pico.files.map(fromRp2040).sort()).toEqual(listed('manifest.json', 'esp32').files.filter((f) => !updates.includes(f)).sort());
    expect(pico.notPreloaded).toEqual([]);
    const base = join(ROOT, 'platforms/moddable/rp2040/temperature-adc');
    expect(existsSync(base + '.c')).toBe(true);
    expect(readFileSync(base + '.js', 'utf8')).toContain('export { readTemperatureAdc };');
  });

  it.each([['esp32', 'esp32'], ['pico/pico_w', 'rp2040'], ['lin', 'lin']])('seed the agent on %s from a native module of its own (JavaScript and C)', (platform, folder) => {
    const m = JSON.parse(readFileSync(join(ROOT, 'manifest.json'), 'utf8')) as { platforms: Record<string, Section> };
    expect(m.platforms[platform].modules?.['feed-agent/platforms/moddable/firmware/hardware-seed']).toBe('./platforms/moddable/' + folder + '/hardware-seed');
    const base = join(ROOT, 'platforms/moddable', folder, 'hardware-seed');
    expect(readFileSync(base + '.c', 'utf8')).toContain('void xs_feedagent_hardware_seed(xsMachine *the)');
    expect(readFileSync(base + '.js', 'utf8')).toContain('function hardwareSeed() @ "xs_feedagent_hardware_seed";');
  });

  it('give pico/pico_w a board of the RP2040 whose ADC input and pulse counter are native modules of ours (JavaScript and C)', () => {
    const pico = listed('platforms/moddable/peripherals/manifest.json', 'pico');
    expect(pico.files).toEqual(listed('platforms/moddable/peripherals/manifest.json', 'esp32').files.concat(['platforms/moddable/rp2040/adc-input.d.ts', 'platforms/moddable/rp2040/edge-counter.d.ts']));
    // Everything rp2040/board imports is listed for pico.
    const board = 'platforms/moddable/rp2040/board.ts';
    for (const file of reached([board])) if (file !== board) expect(pico.files).toContain(file);
    expect(pico.notPreloaded).toEqual([]);
    for (const [module, native] of [['adc-input', 'xs_feedagent_adc_select'], ['edge-counter', 'xs_feedagent_edge_counter']]) {
      const base = join(ROOT, 'platforms/moddable/rp2040', module);
      expect(readFileSync(base + '.c', 'utf8')).toContain('void ' + native + '(xsMachine *the)');
      expect(readFileSync(base + '.js', 'utf8')).toContain('"' + native + '"');
    }
  });

  it.each(flashLayouts())('give an ESP32 build of the %s layout the backlog bound of its own storage partition, less what littlefs keeps', (layout) => {
    expect(LITTLEFS_KEEPS[layout], 'how much littlefs keeps on ' + layout).toBeDefined();
    expect(layoutBacklogBytes(layout)).toBe(storageBytes(layout) - LITTLEFS_KEEPS[layout]);
    expect(layoutBacklogBytes(layout) % 4096, 'whole littlefs blocks').toBe(0);
  });

  it('take the ESP32\'s backlog bound from the layout FEED_AGENT_FLASH picks, and set none of their own over it', () => {
    type Config = { config?: Record<string, unknown> };
    const m = JSON.parse(readFileSync(join(ROOT, 'manifest.json'), 'utf8')) as Config & { platforms: Record<string, Config & { build: Record<string, string>; include: string[] }> };
    const esp32 = m.platforms.esp32;
    expect(esp32.build.PARTITIONS_FILE).toBe('./platforms/moddable/esp32/partitions-$(FEED_AGENT_FLASH).csv');
    expect(esp32.include).toContain('./platforms/moddable/esp32/flash-$(FEED_AGENT_FLASH).json');
    // mcconfig merges a manifest's config after those of the manifests it includes: a value here would win.
    for (const section of [m, ...Object.values(m.platforms)]) expect(section.config ?? {}).not.toHaveProperty('backlogBytes');
  });
});
