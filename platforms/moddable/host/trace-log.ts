// The host's default log: one `level: message` line each through `trace`, except that a line equal to
// the one before is not traced again. While the service is down every retry fails the same way; the
// trace (a serial console, mcsim's output) says so once, then how many times it repeated.
import type { LogLevel } from '../../../src/core/host/host';

export function traceLog(trace: (text: string) => void): (level: LogLevel, message: string) => void {
  let last = '';
  let repeats = 0;
  return (level, message) => {
    const line = level + ': ' + message + '\n';
    if (line === last) {
      repeats++;
      return;
    }
    if (repeats > 0) trace('(the line before ' + repeats + ' more time' + (repeats === 1 ? '' : 's') + ')\n');
    last = line;
    repeats = 0;
    trace(line);
  };
}
