// The core's public surface: what an adapter, a gateway or a device's main module imports.
export { createAgent } from './agent';
export type { Agent, AgentStats, RecordResult, StopOptions } from './agent';
export { checkConfig, ConfigError, UPLINK_DEFAULTS } from './config';
export type { ActuatorConfig, AgentConfig, ReportConfig, SensorConfig, SetAside, UplinkConfig } from './config';
export { FeedClient } from './wire/client';
export type { CallOptions, ClientOptions } from './wire/client';
export type { BatchAnswer } from './wire/answers';
export { FeedError } from './wire/errors';
export type { FeedErrorKind } from './wire/errors';
export type { Host, HttpRequest, HttpResult, InFlight, Log, LogLevel, QueueMemory, QueueStorage, SampleValue, StoredVisit, TimerHandle } from './host/host';
export { MissingResourceError } from './resources/resources';
export { SampleQueue } from './queue/queue';
export type { OverflowPolicy } from './queue/queue';
export { checkInput, compileRestriction, rawData } from './wire/validate';
export type { Restriction } from './wire/validate';
export * from './wire/wire';
