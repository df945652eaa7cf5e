// The gateway's stats in the Prometheus text exposition format (version 0.0.4).
import type { GatewayStats } from './stats';

type Sample = [labels: Record<string, string | number>, value: number];

export function renderMetrics(s: GatewayStats): string {
  const out: string[] = [];
  const family = (name: string, type: 'gauge' | 'counter', help: string, samples: Sample[]): void => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value] of samples) out.push(`${name}${labelText(labels)} ${Number.isFinite(value) ? value : 'NaN'}`);
  };
  const dev = (d: GatewayStats['devices'][number]) => ({ device: d.name, public_key: d.publicKey });
  family('feed_gateway_device_queued', 'gauge', 'Readings queued for the service, in memory and on disk.', s.devices.map((d) => [dev(d), d.queued]));
  family('feed_gateway_device_backlog', 'gauge', 'Of the queued readings, those on disk only, beyond the queue in memory.', s.devices.map((d) => [dev(d), d.backlog]));
  family('feed_gateway_device_accepted_total', 'counter', 'Readings queued (and written to the durable queue) since the gateway started.', s.devices.map((d) => [dev(d), d.accepted]));
  family('feed_gateway_device_restored', 'gauge', 'Readings the durable queue gave back at start, sent again.', s.devices.map((d) => [dev(d), d.restored]));
  family('feed_gateway_device_delivered_total', 'counter', 'Readings the service stored.', s.devices.map((d) => [dev(d), d.delivered]));
  family('feed_gateway_device_set_aside_total', 'counter', 'Readings the service refused, set aside so the rest could flow.', s.devices.map((d) => [dev(d), d.setAside]));
  family('feed_gateway_device_lost_total', 'counter', 'Readings that could not be kept and are gone (a Modbus poll while its backlog was at its bound).', s.devices.map((d) => [dev(d), d.lost]));
  family('feed_gateway_device_held_back_total', 'counter', 'Readings its report rules held back rather than queued.', s.devices.map((d) => [dev(d), d.heldBack]));
  family('feed_gateway_device_refused_total', 'counter', "Readings refused before queuing (outside the resource's subtype).", s.devices.map((d) => [dev(d), d.refused]));
  family('feed_gateway_device_unresolved_total', 'counter', 'Readings sent again without knowing whether the service had stored them.', s.devices.map((d) => [dev(d), d.unresolved]));
  family('feed_gateway_device_requests_total', 'counter', 'Requests made toward the service, of every kind: batches, read-backs, command polls, presence reads, lookups.', s.devices.map((d) => [dev(d), d.requests]));
  family('feed_gateway_device_storage_errors_total', 'counter', 'Durable queue writes that failed: those readings live in memory only.', s.devices.map((d) => [dev(d), d.storageErrors]));
  family('feed_gateway_device_commands_total', 'counter', 'Commands applied to the field.', s.devices.map((d) => [dev(d), d.commands]));
  family('feed_gateway_device_command_errors_total', 'counter', 'Commands that failed or timed out (30 s).', s.devices.map((d) => [dev(d), d.commandErrors]));
  family('feed_gateway_device_oldest_age_seconds', 'gauge', 'Age of the oldest queued reading; 0 when none.', s.devices.map((d) => [dev(d), (d.oldestAgeMs ?? 0) / 1000]));
  family('feed_gateway_device_present', 'gauge', '1 while presence is kept alive (the field device was heard within its silence limit).', s.devices.map((d) => [dev(d), d.present ? 1 : 0]));
  family('feed_gateway_device_auth_paused', 'gauge', '1 while the service refuses the device token.', s.devices.map((d) => [dev(d), d.authPaused ? 1 : 0]));
  family('feed_gateway_device_running', 'gauge', '1 while the device agent runs.', s.devices.map((d) => [dev(d), d.state === 'running' ? 1 : 0]));
  const src = (x: GatewayStats['sources'][number]) => ({ source: x.source, device: x.device, resource: x.resource });
  family('feed_gateway_source_messages_total', 'counter', 'Messages received or registers read.', s.sources.map((x) => [src(x), x.messagesIn]));
  family('feed_gateway_source_parse_errors_total', 'counter', 'Payloads that gave no reading.', s.sources.map((x) => [src(x), x.parseErrors]));
  family('feed_gateway_source_refused_total', 'counter', "Readings outside the resource's subtype.", s.sources.map((x) => [src(x), x.refused]));
  family('feed_gateway_source_read_errors_total', 'counter', 'Modbus reads that failed.', s.sources.map((x) => [src(x), x.readErrors]));
  family('feed_gateway_source_last_seen_timestamp_seconds', 'gauge', 'Unix time of the last message or read; 0 before the first.', s.sources.map((x) => [src(x), x.lastSeen < 0 ? 0 : x.lastSeen / 1000]));
  if (s.mqtt !== null) {
    const b = { broker: s.mqtt.url };
    family('feed_gateway_mqtt_connected', 'gauge', '1 while connected to the broker.', [[b, s.mqtt.connected ? 1 : 0]]);
    family('feed_gateway_mqtt_connects_total', 'counter', 'Successful connections to the broker.', [[b, s.mqtt.connects]]);
    family('feed_gateway_mqtt_messages_total', 'counter', 'Messages from the broker.', [[b, s.mqtt.messagesIn]]);
    family('feed_gateway_mqtt_unmatched_total', 'counter', 'Messages on a topic that no resource takes.', [[b, s.mqtt.unmatched]]);
    family('feed_gateway_mqtt_duplicates_skipped_total', 'counter', 'Redelivered messages recognised as stored before a restart.', [[b, s.mqtt.duplicatesSkipped]]);
  }
  family('feed_gateway_modbus_connected', 'gauge', '1 while connected to the Modbus device.', s.modbus.map((m) => [{ modbus: m.name }, m.connected ? 1 : 0]));
  family('feed_gateway_requests_waiting', 'gauge', "Requests waiting for a turn under the gateway's rate limit toward the service (one a device at most).", [[{}, s.requestsWaiting]]);
  return out.join('\n') + '\n';
}

function labelText(labels: Record<string, string | number>): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${String(v).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`);
  return parts.length === 0 ? '' : '{' + parts.join(',') + '}';
}
