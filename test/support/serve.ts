// `feed-agent serve` in a child process, as users run it: the one way the tests, the soak and the
// benchmarks start it. Its URL comes from its first line (exactly `listening on http://HOST:PORT`,
// docs/service.md); everything it prints is kept, for the tests that read it and for the error of a
// start that failed; SIGUSR2 and SIGTERM are sent and answered as a user would see them.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { track } from './children';

/** How long the first line, or a line waited for, may take: generous, for a machine under load. */
const WAIT_MS = 10_000;

export interface ServeOptions {
  /** Resolve, with `url` '', when it exits before its first line (a refused option or seed), rather than reject. */
  mayExit?: boolean;
}

export class Served {
  readonly child: ChildProcess;
  /** `http://HOST:PORT`, from the first line; '' when it exited first. */
  url = '';
  /** Its first line on stdout. */
  firstLine = '';
  /** Its exit code once it exited (null when a signal ended it). */
  readonly exited: Promise<number | null>;
  private out = '';

  private constructor(cli: string, args: string[]) {
    this.child = track(spawn(process.execPath, [cli, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'] }));
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.out += chunk));
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.out += chunk));
    this.exited = new Promise((resolve) => this.child.on('close', (code) => resolve(code)));
  }

  /** Starts `feed-agent serve ARGS` with the built CLI `cli`; resolves once its first line is out. */
  static async start(cli: string, args: string[], options: ServeOptions = {}): Promise<Served> {
    const served = new Served(cli, args);
    let stdout = '';
    const first = new Promise<string | null>((resolve) => {
      served.child.stdout!.on('data', (chunk: string) => {
        stdout += chunk;
        if (stdout.includes('\n')) resolve(stdout.split('\n')[0]);
      });
      void served.exited.then(() => resolve(null));
    });
    const line = await Promise.race([first, sleep(WAIT_MS, undefined)]);
    if (line === undefined) {
      served.child.kill('SIGKILL');
      throw new Error(`feed-agent serve: no first line within ${WAIT_MS / 1000} s:\n${served.out}`);
    }
    if (line === null && options.mayExit !== true) throw new Error('feed-agent serve exited before it listened:\n' + served.out);
    served.firstLine = line ?? '';
    served.url = /^listening on (http:\/\/\S+)$/.exec(served.firstLine)?.[1] ?? '';
    return served;
  }

  /** Everything it wrote to stdout and stderr so far. */
  output(): string {
    return this.out;
  }

  /**
   * The first output line, from offset `from`, that `pattern` matches (a string: that contains it): its
   * first capture, or the whole line.
   */
  async line(pattern: RegExp | string, from = 0): Promise<string> {
    for (let waited = 0; waited < WAIT_MS; waited += 20) {
      for (const line of this.out.slice(from).split('\n')) {
        const match = typeof pattern === 'string' ? (line.includes(pattern) ? [line] : null) : pattern.exec(line);
        if (match !== null) return match[1] ?? line;
      }
      await sleep(20);
    }
    throw new Error(`feed-agent serve: no line matching ${pattern} within ${WAIT_MS / 1000} s:\n${this.out}`);
  }

  /** SIGUSR2 (with --seed: the seed file applied again), then the first line it prints that matches `answer`. */
  async reloadSeed(answer: RegExp | string): Promise<string> {
    const from = this.out.length;
    this.child.kill('SIGUSR2');
    return this.line(answer, from);
  }

  /** SIGTERM, and its exit code once it exited. */
  async stop(): Promise<number | null> {
    this.child.kill('SIGTERM');
    return this.exited;
  }
}
