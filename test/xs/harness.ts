// The Node side of the XS harness: bundles an entry for the XS engine and runs it in an xsnap worker
// (Moddable's XS, built by @agoric/xsnap at install). The worker reaches Node only through its
// synchronous issueCommand; each command is one JSON message, answered by `onCommand` as
// `{ok: value}` or `{error: message}`.
import '@endo/init';
import { xsnap } from '@agoric/xsnap';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Plugin } from 'esbuild';
import ts from 'typescript';
import { errorText } from '../../src/core/wire/errors';
import type { PreloadReport } from './device-realm';

/** The worker's meters after an evaluation: live slots and XS's compute count. */
export interface Meter {
  currentHeapCount: number;
  compute: number;
}

export type CommandHandler = (message: unknown) => Promise<unknown>;

export interface BundleOptions {
  minify?: boolean;
  /** The entry's exports stay reachable as this global (otherwise only its side effects do). */
  globalName?: string;
  /** Ends every module whose path this matches with its `__xsPreload` record (device-realm.ts). */
  preload?: RegExp;
}

/** Bundles `entry` into one script XS can evaluate: no modules, ES2020, nothing of Node. */
export async function bundleForXs(entry: string, options: BundleOptions = {}): Promise<string> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'iife',
    target: 'es2020',
    platform: 'neutral',
    minify: options.minify ?? false,
    globalName: options.globalName,
    plugins: options.preload ? [preloadPlugin(options.preload)] : [],
    legalComments: 'none',
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}

/**
 * The modules a device build preloads (manifest.json): the core, and the Moddable adapter in its folders
 * (host, storage, peripherals) with its firmware.
 */
const DEVICE_MODULES = /[\\/](src[\\/]core|platforms[\\/]moddable)([\\/][\w-]+)?[\\/][^\\/]+\.ts$/;

/** The names a module declares at its top level, as values: what its closures may hold at run time. */
export function topLevelBindings(source: string, file: string): string[] {
  const names: string[] = [];
  const collect = (name: ts.BindingName): void => {
    if (ts.isIdentifier(name)) names.push(name.text);
    else for (const element of name.elements) if (!ts.isOmittedExpression(element)) collect(element.name);
  };
  for (const statement of ts.createSourceFile(file, source, ts.ScriptTarget.ES2020).statements) {
    if (ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.DeclareKeyword)) continue;
    if (ts.isVariableStatement(statement)) for (const d of statement.declarationList.declarations) collect(d.name);
    else if ((ts.isFunctionDeclaration(statement) && statement.body) || ts.isClassDeclaration(statement)) {
      if (statement.name) names.push(statement.name.text);
    }
  }
  return names;
}

/** Appends to each module `filter` matches the call that hands its top-level bindings to the device realm. */
function preloadPlugin(filter: RegExp): Plugin {
  return {
    name: 'xs-preload',
    setup(b) {
      b.onLoad({ filter }, async ({ path }) => {
        const source = await fs.promises.readFile(path, 'utf8');
        const names = topLevelBindings(source, path);
        const record = '\n;(globalThis as any).__xsPreload(' + JSON.stringify(path) + ', () => ({' + names.join(', ') + '}));\n';
        return { contents: source + record, loader: 'ts' };
      });
    },
  };
}

let realmScript: Promise<string> | null = null;

/** The script that makes a worker's realm the device's (device-realm.ts), bundled once per process. */
function deviceRealm(): Promise<string> {
  realmScript ??= bundleForXs(fileURLToPath(new URL('./device-realm.ts', import.meta.url)));
  return realmScript;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class XsWorker {
  /** Answers the worker's commands; a test swaps it per scenario. */
  onCommand: CommandHandler = () => Promise.reject(new Error('no command handler is set'));

  private constructor(private readonly worker: Awaited<ReturnType<typeof xsnap>>) {}

  static async start(name = 'feed-agent-xs'): Promise<XsWorker> {
    let self: XsWorker | null = null;
    const worker = await xsnap({
      os: os.type(),
      spawn,
      fs: { ...fs, ...fs.promises },
      name,
      // No limit: a scenario is a long evaluation (all its virtual time runs inside one).
      meteringLimit: 0,
      handleCommand: async (message: Uint8Array) => {
        let reply: unknown;
        try {
          reply = { ok: await self!.onCommand(JSON.parse(decoder.decode(message))) };
        } catch (e) {
          reply = { error: errorText(e) };
        }
        return encoder.encode(JSON.stringify(reply));
      },
    });
    self = new XsWorker(worker);
    return self;
  }

  /**
   * Starts a worker and evaluates the bundle of `entry` (a file URL) in it. With `device` (the default),
   * the realm is first made the device's, and the modules `preloaded` matches (by default the core and
   * the adapter) are left as preload leaves them once the bundle has run (device-realm.ts).
   */
  static async load(name: string, entry: URL, options: { device?: boolean; preloaded?: RegExp } = {}): Promise<XsWorker> {
    const device = options.device ?? true;
    const worker = await XsWorker.start(name);
    if (device) await worker.evaluate(await deviceRealm());
    await worker.evaluate(await bundleForXs(fileURLToPath(entry), device ? { preload: options.preloaded ?? DEVICE_MODULES } : {}));
    if (device) {
      const { reply } = await worker.evaluate('new TextEncoder().encode(JSON.stringify(__xsEndPreload())).buffer');
      worker.preload = JSON.parse(reply) as PreloadReport;
    }
    return worker;
  }

  /** What the device realm left as preload does: the modules (their paths), and what stayed aliasable. */
  preload: PreloadReport = { modules: [], aliasable: [] };

  /** Evaluates a script; resolves with its meters and, when it gave an ArrayBuffer (or a box holding one), its text. */
  async evaluate(code: string): Promise<{ reply: string; meter: Meter }> {
    const { reply, meterUsage } = await this.worker.evaluate(code);
    const { currentHeapCount, compute } = meterUsage;
    if (currentHeapCount === null || compute === null) throw new Error('the xsnap worker gave no meter report');
    return { reply: decoder.decode(reply), meter: { currentHeapCount, compute } };
  }

  /** Evaluates a call to a global the bundle defined, its arguments given as JSON; resolves as `evaluate` does. */
  invoke(fn: string, ...args: unknown[]): Promise<{ reply: string; meter: Meter }> {
    return this.evaluate(fn + '(' + args.map((a) => JSON.stringify(a)).join(',') + ')');
  }

  /** Invokes a global that answers with `settled()`; resolves with its value, rejects with its error. */
  async call(fn: string, ...args: unknown[]): Promise<unknown> {
    const { reply } = await this.invoke(fn, ...args);
    if (reply === '') throw new Error(fn + ' did not settle: the XS run loop went idle with the work unfinished');
    const outcome = JSON.parse(reply) as { ok?: unknown; error?: string };
    if (outcome.error !== undefined) throw new Error(outcome.error);
    return outcome.ok;
  }

  close(): Promise<void> {
    return this.worker.close();
  }
}

/** A worker's live slots once everything unreachable is collected (the benchmarks' and the soak's measure). */
export async function liveSlots(worker: XsWorker): Promise<number> {
  await worker.evaluate('gc()');
  return (await worker.evaluate('gc()')).meter.currentHeapCount;
}
