// The protocol libraries are optional peers of the package (as better-sqlite3 is for the service): a
// config that needs one loads it here, and a missing one is named with the command that installs it.
import type * as Mqtt from 'mqtt';
import type ModbusRTU from 'modbus-serial';
import type { GatewayConfig } from './config';
import { MissingPeerError } from './missing-peer';

export type MqttLib = typeof Mqtt;
export type ModbusLib = typeof ModbusRTU;

export interface Peers {
  mqtt?: MqttLib;
  modbus?: ModbusLib;
}


/** Loads what `config` needs; throws one MissingPeerError naming every missing package. */
export async function loadPeers(config: Pick<GatewayConfig, 'mqtt' | 'modbus'>): Promise<Peers> {
  const missing: string[] = [];
  const peers: Peers = {};
  if (config.mqtt !== undefined) peers.mqtt = await load('mqtt', missing, (m: { default?: MqttLib } & MqttLib) => m.default ?? m);
  if (config.modbus.length > 0) peers.modbus = await load('modbus-serial', missing, (m: { default: ModbusLib }) => m.default);
  if (missing.length > 0) throw new MissingPeerError(missing);
  return peers;
}

async function load<M, T>(name: string, missing: string[], pick: (m: M) => T): Promise<T | undefined> {
  try {
    return pick((await import(name)) as M);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw e;
    missing.push(name);
    return undefined;
  }
}
