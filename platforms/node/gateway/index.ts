// feed-agent/gateway: field devices on MQTT and Modbus TCP, described in a config file, delivered to the
// service through one agent and one durable queue per device (docs/gateway.md).
export { GATEWAY_DEFAULTS, GatewayConfigError, parseGatewayConfig } from './config';
export type {
  CommandTarget,
  DeviceConfig,
  FsyncPolicy,
  GatewayConfig,
  ModbusInput,
  ModbusSourceConfig,
  MqttBrokerConfig,
  MqttInput,
  RegisterKind,
  RegisterType,
  ResourceConfig,
  WordOrder,
} from './config';
export { startGateway } from './gateway';
export type { Gateway, GatewayOptions } from './gateway';
export type { DeviceStats } from './device';
export type { BrokerStats, GatewayStats, ModbusPeerStats, SourceStats } from './stats';
export { MissingPeerError } from './missing-peer';
