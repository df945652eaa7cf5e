// Where the agent's log lines go on Node when nobody said, following Node's conventions: NODE_DEBUG=feed-agent
// prints every line (util.debuglog), and a warning or an error reaches a program that passed no `log` as a
// process warning (`FeedAgentWarning`, printed on stderr unless the program handles 'warning' events or
// runs with --no-warnings), once per kind, so that an outage does not repeat it at every retry.
import { debuglog } from 'node:util';
import type { Log } from '../../../src/core/host/host';

const debug = debuglog('feed-agent');
/** Kinds warned about per host: past this many, a flood of new kinds is not shown either. */
const MAX_KINDS = 100;
const DETAIL = 'feed-agent shows each kind of warning once: pass `log` to createNodeHost() for every line, or run with NODE_DEBUG=feed-agent';

/** The host's log: `log` if given, else warnings once per kind; with NODE_DEBUG=feed-agent, every line as well. */
export function hostLog(log: Log | undefined): Log {
  const next = log ?? warnOnce();
  return (level, message) => {
    if (debug.enabled) debug('%s: %s', level, message);
    next(level, message);
  };
}

function warnOnce(): Log {
  const seen = new Set<string>();
  return (level, message) => {
    // NODE_DEBUG shows it already; debug and info lines are not warnings.
    if (debug.enabled || (level !== 'warn' && level !== 'error')) return;
    // A kind is the message without its numbers (counts, ports, ids, delays).
    const kind = level + ' ' + message.replace(/\d+/g, '#');
    if (seen.has(kind) || seen.size >= MAX_KINDS) return;
    seen.add(kind);
    process.emitWarning(`${level}: ${message}`, { type: 'FeedAgentWarning', code: level === 'error' ? 'FEED_AGENT_ERROR' : 'FEED_AGENT_WARNING', detail: DETAIL });
  };
}
