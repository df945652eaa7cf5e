// What a firmware run prints, line by line, as it arrives: mcsim's trace (sdk.ts) and an emulated ESP32's
// UART (qemu.ts) are both a child process's output. A wait for a line gives up at once when the process is
// gone, with the output's tail in its error.
import type { ChildProcess } from 'node:child_process';

export class LineLog {
  readonly lines: string[] = [];
  /** Date.now() when each line arrived. */
  readonly at: number[] = [];
  private waiters: (() => void)[] = [];
  private exited = false;

  /** `name` says whose output it is in an error; `encoding` reads its bytes (a UART's are not all UTF-8). */
  constructor(
    protected readonly child: ChildProcess,
    private readonly name: string,
    encoding: BufferEncoding,
  ) {
    let partial = '';
    const take = (chunk: Buffer): void => {
      const parts = (partial + chunk.toString(encoding)).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        this.lines.push(line.replace(/\r$/, ''));
        this.at.push(Date.now());
      }
      this.wake();
    };
    child.stdout?.on('data', take);
    child.stderr?.on('data', take);
    child.on('exit', () => {
      this.exited = true;
      this.wake();
    });
  }

  /** Whether the process still runs: on mcsim an XS abort (memory full, an exception nobody caught) ends it. */
  get alive(): boolean {
    return !this.exited;
  }

  /** The output without the instrumented build's counters. */
  get trace(): string[] {
    return this.lines.filter((line) => !line.startsWith('instruments'));
  }

  /** The last `n` lines, for a failure's message. */
  tail(n: number): string {
    return this.trace.slice(-n).join('\n');
  }

  /** The index of the first line from `from` on that matches, or rejects after `ms` (or once the process is gone) with the tail. */
  async waitFor(pattern: RegExp, ms: number, from = 0): Promise<number> {
    const end = Date.now() + ms;
    for (;;) {
      for (let i = from; i < this.lines.length; i++) if (pattern.test(this.lines[i])) return i;
      if (this.exited || Date.now() >= end) {
        throw new Error('no line matching ' + pattern + (this.exited ? ' (' + this.name + ' exited)' : ' within ' + ms + ' ms') + '; its output:\n' + this.tail(25));
      }
      await this.nextLine(end);
    }
  }

  /** The columns of the instrumented build's `instruments:` lines. */
  instruments(): Record<string, number>[] {
    return instrumentColumns(this.lines);
  }

  /** Kills the process with `kill` unless it is gone, and resolves once it is. */
  protected async end(kill: () => void): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    try {
      kill();
    } catch {
      // Gone already.
    }
    await exited;
  }

  private wake(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Resolves when a line arrives or after 500 ms, never later than `end`. */
  private nextLine(end: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.min(500, end - Date.now()));
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/**
 * The columns of an instrumented build's `instruments:` lines (-d, or -i on a device), by the names its
 * `instruments key:` line gives. A line without a number for every name is left out: on a device's UART
 * another task's output can cut into one, and a NaN would poison every Math.max or Math.min of its column.
 */
export function instrumentColumns(lines: string[]): Record<string, number>[] {
  const key = lines.find((l) => l.startsWith('instruments key:'));
  if (key === undefined) return [];
  const names = key.slice('instruments key:'.length).trim().split(',');
  const rows: Record<string, number>[] = [];
  for (const line of lines) {
    if (!line.startsWith('instruments:')) continue;
    const fields = line.slice('instruments:'.length).trim().split(',');
    if (fields.length !== names.length || !fields.every((f) => /^\d+$/.test(f))) continue;
    rows.push(Object.fromEntries(fields.map((v, i) => [names[i], Number(v)])));
  }
  return rows;
}

/**
 * Waits until `done`, looking every 250 ms; fails after `ms`, or as soon as `run` (whose output's tail the
 * error carries) is gone.
 */
export async function until(what: string, done: () => boolean | Promise<boolean>, ms: number, run?: LineLog | null): Promise<void> {
  const end = Date.now() + ms;
  while (!(await done())) {
    const why = run?.alive === false ? 'the run ended before ' + what : Date.now() > end ? 'not within ' + ms + ' ms: ' + what : '';
    if (why !== '') throw new Error(why + '\nits output:\n' + (run?.tail(20) ?? ''));
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
