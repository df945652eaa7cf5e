// What the gateway counts per source of readings, and the gateway's stats as a whole.
import type { DeviceStats } from './device';

/** One configured input (an MQTT topic filter or a Modbus register) of one device's resource. */
export interface SourceStats {
  /** `mqtt:<filter>` or `modbus:<source>/<kind>/<address>`. */
  source: string;
  device: string;
  resource: number;
  messagesIn: number;
  /** Payloads that gave no reading (not a number or text, not JSON, no such field). */
  parseErrors: number;
  /** Readings the resource's subtype refuses (out of range, not of its pattern). */
  refused: number;
  /** Modbus reads that failed (no answer, an exception, the connection down). */
  readErrors: number;
  /** Wall-clock ms (Date.now()) of the last message or successful read; -1 before the first. */
  lastSeen: number;
}

export interface BrokerStats {
  url: string;
  connected: boolean;
  connects: number;
  messagesIn: number;
  /** Messages on a topic no resource takes (each topic logged once). */
  unmatched: number;
  /** Redelivered messages (DUP) recognised as already stored before a restart: acknowledged, not stored again. */
  duplicatesSkipped: number;
  /** Messages whose acknowledgement waited because a device's backlog was at its bound. */
  heldForRoom: number;
  lastError: string | null;
}

export interface ModbusPeerStats {
  name: string;
  connected: boolean;
  readErrors: number;
  lastError: string | null;
}

export interface GatewayStats {
  devices: DeviceStats[];
  sources: SourceStats[];
  mqtt: BrokerStats | null;
  modbus: ModbusPeerStats[];
  /** Requests waiting for a turn under the gateway's rate limit toward the service (not built yet). */
  requestsWaiting: number;
}

export function newSourceStats(source: string, device: string, resource: number): SourceStats {
  return { source, device, resource, messagesIn: 0, parseErrors: 0, refused: 0, readErrors: 0, lastSeen: -1 };
}
