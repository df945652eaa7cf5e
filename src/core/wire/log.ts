// The agent's log: every line goes to the host's sink (if any) with the token taken out of it.
import type { Host, Log } from '../host/host';
import { redact } from './errors';

export function scrubbedLog(host: Pick<Host, 'log'>, token: string): Log {
  return (level, message) => host.log?.(level, redact(message, token));
}
