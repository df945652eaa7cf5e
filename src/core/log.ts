// The agent's log: every line goes to the host's sink (if any) with the token taken out of it.
import type { Host, LogLevel } from './host';
import { redact } from './errors';

/** Where a part of the agent says what happened. */
export type Log = (level: LogLevel, message: string) => void;

export function scrubbedLog(host: Pick<Host, 'log'>, token: string): Log {
  return (level, message) => host.log?.(level, redact(message, token));
}
