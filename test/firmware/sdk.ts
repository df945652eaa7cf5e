// The Moddable SDK of this machine, when there is one: builds an app of this project with mcconfig for
// the simulator (lin) and runs it headless, mcsim under Xvfb, reading its trace. Used by the real-build
// test (lin.test.ts) and the firmware bench; neither builds the SDK itself (its Getting Started guide
// does: MODDABLE set, its tools built, libgtk-3-dev and xvfb from Debian).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { LineLog } from './line-log';

export interface Sdk {
  moddable: string;
  /** PATH with the SDK's tools and this project's TypeScript (mcconfig runs the tsc on the PATH). */
  path: string;
}

/** The SDK, or why it cannot be used here; `root` is this project's directory. */
export function findSdk(root: string): Sdk | string {
  const moddable = process.env.MODDABLE;
  if (!moddable) return 'MODDABLE is not set (the Moddable SDK is not installed here)';
  const tools = join(moddable, 'build', 'bin', 'lin', 'release');
  for (const tool of ['mcconfig', 'mcsim']) {
    if (!existsSync(join(tools, tool))) return tool + ' is not in ' + tools + ': build the SDK tools (cd $MODDABLE/build/makefiles/lin && make)';
  }
  if (spawnSync('xvfb-run', ['--help'], { stdio: 'ignore' }).error) return 'xvfb-run is missing (apt-get install xvfb)';
  return { moddable, path: [tools, join(root, 'node_modules', '.bin'), process.env.PATH].join(':') };
}

/** A failed build's error: its command line and the tail of its output. */
export function buildFailed(command: string, output: string): Error {
  // The token is on the command line: never in an error that CI prints.
  return new Error((command + ' failed:\n' + output.split('\n').slice(-30).join('\n')).replace(/\btoken=\S*/g, 'token=[redacted]'));
}

export interface Build {
  /** The simulator library mcsim loads (lin), or the output directory of a release build. */
  library: string;
  /** Where mcconfig compiled the modules to .xsb. */
  modules: string;
}

/**
 * Builds the app whose manifest is in `appDir` for lin into `outDir`, with `config` as key=value on the
 * mcconfig line; `debug` (default true) for the instruments lines and throw locations; `env`, variables
 * the manifest reads as $(NAME) (a `build` entry's `?=` default gives way to them).
 */
export function buildApp(sdk: Sdk, appDir: string, outDir: string, config: Record<string, string | number>, debug = true, env: Record<string, string> = {}): Build {
  mkdirSync(outDir, { recursive: true });
  // `-t build`: the library alone. The SDK's default target for a debug lin build (tools/mcconfig/make.lin.mk,
  // `all`) also runs `pkill mcsim` and starts mcsim, which would kill every simulator of this machine,
  // those of a test file running beside this one included.
  const args = [...(debug ? ['-d'] : []), '-m', '-p', 'lin', '-t', 'build', '-o', outDir, ...Object.entries(config).map(([k, v]) => k + '=' + v)];
  const run = spawnSync('mcconfig', args, { cwd: appDir, env: { ...process.env, ...env, MODDABLE: sdk.moddable, PATH: sdk.path }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const output = (run.stdout ?? '') + (run.stderr ?? '');
  if (run.status !== 0) throw buildFailed('mcconfig ' + args.join(' '), output);
  const kind = debug ? 'debug' : 'release';
  const name = basename(appDir);
  return {
    library: join(outDir, 'bin', 'lin', 'mc', kind, name, 'mc.so'),
    modules: join(outDir, 'tmp', 'lin', 'mc', kind, name, 'modules'),
  };
}

/** One run of a lin build in mcsim, headless: its trace line by line. */
export class Simulator extends LineLog {
  /**
   * `configHome`: the XDG_CONFIG_HOME of this run. mcsim copies the library it runs into the user's config
   * directory, so two simulators started together with the same one can load each other's build.
   */
  constructor(sdk: Sdk, library: string, configHome?: string) {
    // stdbuf: mcsim's standard output is a pipe here, and a killed process would lose its buffer.
    const child = spawn('xvfb-run', ['-a', 'stdbuf', '-oL', 'mcsim', library], {
      env: { ...process.env, PATH: sdk.path, ...(configHome === undefined ? {} : { XDG_CONFIG_HOME: configHome }) },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    super(child, 'mcsim', 'utf8');
  }

  /** Kills mcsim and Xvfb at once (SIGKILL: a power cut, as far as the app can tell). */
  kill(): Promise<void> {
    return this.end(() => process.kill(-(this.child.pid as number), 'SIGKILL'));
  }
}

/** The .xsb files under `dir` whose module path starts with `prefix` (e.g. feed-agent/src/core). */
export function xsbFiles(dir: string, prefix: string): string[] {
  const root = join(dir, prefix);
  if (!existsSync(root)) return [];
  const files: string[] = [];
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.xsb')) files.push(path);
    }
  };
  walk(root);
  return files;
}
