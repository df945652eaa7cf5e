// feed-agent's Node entry: the host adapter and the durable queue. An application builds one host per
// device (each with its own queue directory) and hands it to the core's agent.
export { createNodeHost } from './host/host';
export type { NodeHostOptions } from './host/host';
export { createHttp } from './host/http';
export type { Dispatcher, HttpOptions } from './host/http';
export { openDurableQueue } from './storage/durable-queue';
export type { DurableQueue, DurableQueueOptions, DurableQueueStats, FsyncPolicy } from './storage/durable-queue';
