// The requests and comparisons the adapter scenarios share (scenarios.ts, keep-alive-scenarios.ts).
import type { AgentConfig } from '../../src/core/config';
import type { HttpRequest, HttpResult } from '../../src/core/host/host';
import type { AdapterContext } from './context';

export const TIMEOUT_MS = 2_000;
export const MAX_RESPONSE_BYTES = 16_384;

/** Operation 6, silent: a GET without a body. */
export function lastFeedsOf(ctx: AdapterContext, ids: number[]): HttpRequest {
  return { method: 'GET', url: ctx.url + '/api/device/' + ctx.publicKey + '/resources/' + ids.join(',') + '/feeds/last?silent=true', headers: { Accept: 'application/json' }, timeoutMs: TIMEOUT_MS, maxResponseBytes: MAX_RESPONSE_BYTES };
}

/** Operation 4: a POST of these elements. */
export function createFeedsOf(ctx: AdapterContext, elements: { id_resource: number; input: number | string }[]): HttpRequest {
  return {
    method: 'POST',
    url: ctx.url + '/api/device/' + ctx.publicKey + '/resources/feeds',
    headers: { Accept: 'application/json', Authorization: 'Bearer ' + ctx.token, 'Content-Type': 'application/json' },
    body: JSON.stringify(elements),
    timeoutMs: TIMEOUT_MS,
    maxResponseBytes: MAX_RESPONSE_BYTES,
  };
}

/** A failed exchange as the scenarios compare it: its kind, maybeDelivered and the start of its message. */
export function failure(result: HttpResult): unknown {
  if (result.kind === 'response') return { kind: 'response', status: result.status };
  return { kind: result.kind, maybeDelivered: result.maybeDelivered, message: result.kind === 'network' ? result.message : '' };
}

export function agentConfig(ctx: AdapterContext, extra: Partial<AgentConfig>): AgentConfig {
  return { url: ctx.url, publicKey: ctx.publicKey, token: ctx.token, seed: 7, ...extra, uplink: { startJitterMs: 0, ...extra.uplink } };
}
