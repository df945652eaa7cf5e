// The core's public surface: what an adapter, a gateway or a device's main module imports.
export { createAgent } from './agent';
export type { Agent, AgentStats, RecordResult, StopOptions } from './agent';
export { checkConfig, ConfigError, UPLINK_DEFAULTS } from './config';
export type { ActuatorConfig, AgentConfig, ReportConfig, SensorConfig, SetAside, UplinkConfig } from './config';
export { FeedClient } from './client';
export type { BatchAnswer, CallOptions, ClientOptions } from './client';
export { FeedError } from './errors';
export type { FeedErrorKind } from './errors';
export type { Host, HttpRequest, HttpResult, InFlight, Log, LogLevel, QueueMemory, QueueStorage, SampleValue, StoredVisit, TimerHandle } from './host';
export { MissingResourceError } from './resources';
export { SampleQueue } from './queue';
export type { OverflowPolicy } from './queue';
export { checkInput, compileRestriction, rawData } from './validate';
export type { Restriction } from './validate';
export * from './wire';
