// The gateway's retry ladders (the MQTT reconnects, each Modbus device's connects, each register's reads):
// the core's one ladder (src/core/requests/retry-ladder.ts), so that their waits come from the one backoff and a
// failing endpoint is logged when its state changes (failing; still failing every 5 minutes, with a
// count; recovered), never once per try. Bad input, which is no endpoint, is logged once per key (once.ts).
import type { Ladder } from '../../../src/core/requests/backoff';
import { FailureReport, RetryLadder } from '../../../src/core/requests/retry-ladder';

/** A ladder whose report goes to the gateway's log, as `<endpoint>: failing: <why>` (the gateway's own lines carry no level). */
export function gatewayLadder(settings: Ladder, endpoint: string, log: (line: string) => void): RetryLadder {
  return new RetryLadder(settings, new FailureReport(endpoint, (_level, message) => log(message)), Math.random);
}
