// The firmware's periodic status line: what a developer watching the serial console or mcsim's output
// wants at a glance, and the counts that account for every sample of this run (accepted: queued, sent,
// dropped or set aside; unresolved: those sent again without knowing whether they were stored, the most
// that can be stored twice), and the HTTP requests made, of every kind, which a fault test counts
// against the backoff's budget. The core's stats never hold the token.
import type { AgentStats } from '../../../src/core/agent';

/** `notAnswering`: the I2C sensors of the description that do not answer now. */
export function statusLine(stats: AgentStats, notAnswering: readonly string[] = []): string {
  return 'feed-agent: queued ' + stats.queued + '/' + stats.capacity + ', accepted ' + stats.accepted + ', sent ' + stats.sent + ' in ' + stats.batches + ' batches, retries ' +
    stats.retries + ', dropped ' + stats.droppedOverflow + ', rejected ' + stats.rejectedInvalid + ', set aside ' + stats.setAside +
    ', unresolved ' + stats.unresolved + ', requests ' + stats.requests + ', commands ' + stats.commands + (stats.heldBack > 0 ? ', held back ' + stats.heldBack : '') + (stats.authPaused ? ', paused: token refused' : '') +
    (notAnswering.length === 0 ? '' : ', not answering: ' + notAnswering.join(', ')) +
    (stats.lastError === null ? '' : ', last error: ' + stats.lastError) + '\n';
}
