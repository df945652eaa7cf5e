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
import { errorText } from '../../src/core/errors';

/** The worker's meters after an evaluation: live slots and XS's compute count. */
export interface Meter {
  currentHeapCount: number;
  compute: number;
}

export type CommandHandler = (message: unknown) => Promise<unknown>;

/**
 * Bundles `entry` into one script XS can evaluate: no modules, ES2020, nothing of Node. With
 * `globalName`, the entry's exports stay reachable as that global (otherwise only its side effects do);
 * `mangleProps` lets the minifier shorten the property names it matches.
 */
export async function bundleForXs(entry: string, options: { minify?: boolean; globalName?: string; mangleProps?: RegExp } = {}): Promise<string> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'iife',
    target: 'es2020',
    platform: 'neutral',
    minify: options.minify ?? false,
    globalName: options.globalName,
    mangleProps: options.mangleProps,
    legalComments: 'none',
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
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

  /** Starts a worker and evaluates the bundle of `entry` (a file URL) in it. */
  static async load(name: string, entry: URL): Promise<XsWorker> {
    const worker = await XsWorker.start(name);
    await worker.evaluate(await bundleForXs(fileURLToPath(entry)));
    return worker;
  }

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
