// The status line the gateway logs every `status.everyS` seconds: what flows, what waits, what fails.
import type { GatewayStats } from './stats';

export interface Totals {
  messagesIn: number;
  delivered: number;
}

export function totals(s: GatewayStats): Totals {
  return {
    messagesIn: s.sources.reduce((n, x) => n + x.messagesIn, 0),
    delivered: s.devices.reduce((n, d) => n + d.delivered, 0),
  };
}

export function statusLine(s: GatewayStats, last: Totals, seconds: number): string {
  const now = totals(s);
  const sum = (f: (d: GatewayStats['devices'][number]) => number): number => s.devices.reduce((n, d) => n + f(d), 0);
  const running = s.devices.filter((d) => d.state === 'running').length;
  const absent = s.devices.filter((d) => !d.present).length;
  const paused = s.devices.filter((d) => d.authPaused).map((d) => d.name);
  const oldest = Math.max(-1, ...s.devices.map((d) => d.oldestAgeMs ?? -1));
  const rate = (n: number): string => (seconds > 0 ? (n / seconds).toFixed(1) : '0');
  const parts = [
    `gateway: ${running}/${s.devices.length} devices running` + (absent > 0 ? `, ${absent} silent` : ''),
    `in ${rate(now.messagesIn - last.messagesIn)}/s`,
    `delivered ${rate(now.delivered - last.delivered)}/s (${now.delivered})`,
    `queued ${sum((d) => d.queued)} (${sum((d) => d.backlog)} on disk` + (oldest >= 0 ? `, oldest ${(oldest / 1000).toFixed(1)} s)` : ')'),
    `set aside ${sum((d) => d.setAside)}`,
    `lost ${sum((d) => d.lost)}`,
    `parse errors ${s.sources.reduce((n, x) => n + x.parseErrors, 0)}`,
    `refused ${sum((d) => d.refused)}`,
  ];
  if (s.mqtt !== null) parts.push(`mqtt ${s.mqtt.connected ? 'up' : 'down'}` + (s.mqtt.unmatched > 0 ? `, unmatched ${s.mqtt.unmatched}` : ''));
  if (s.modbus.length > 0) parts.push(`modbus ${s.modbus.filter((m) => m.connected).length}/${s.modbus.length} up`);
  if (s.requestsWaiting > 0) parts.push(`${s.requestsWaiting} requests paced`);
  if (paused.length > 0) parts.push(`token refused: ${paused.join(', ')}`);
  return parts.join('  ');
}
