// feed-agent's Node entry: the host adapter and the durable queue. An application builds one host per
// device (each with its own queue directory) and hands it to the core's agent.
export { createNodeHost } from './host';
export type { NodeHostOptions } from './host';
export { createHttp } from './http';
export type { Dispatcher, HttpOptions } from './http';
export { openDurableQueue } from './durable-queue';
export type { DurableQueue, DurableQueueOptions, DurableQueueStats, FsyncPolicy } from './durable-queue';
