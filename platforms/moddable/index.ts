// feed-agent's Moddable entry: the host adapter and the flash queue, with the SDK's real modules. A
// firmware builds one host and hands it to the core's agent; platforms/moddable/firmware/main.ts is one.
//
// @example
// import config from "mc/config";
// import Time from "time";
// import { createAgent } from "feed-agent/src/core/index";
// import { createModdableHost, files, openFlashQueue, sdk } from "feed-agent/platforms/moddable/index";
//
// const storage = openFlashQueue(files, { path: config.file.root + "feed-agent.q" });
// const agent = createAgent(createModdableHost(sdk, { storage }), {
//   url: config.url, publicKey: config.publicKey, token: config.token,
//   sensors: [{ resource: 201, every: 10_000, read: () => Time.ticks / 1000 }],
// });
// agent.start().catch((e) => trace(`feed-agent: ${e.message}\n`));
export { createModdableHost } from './host/host';
export type { ModdableHostOptions } from './host/host';
export { createHttp } from './host/http';
export type { HttpOptions } from './host/http';
export { openFlashQueue } from './storage/flash-queue';
export type { FlashQueue, FlashQueueOptions, FlashQueueStats } from './storage/flash-queue';
export { files, sdk } from './modules';
export type { Sdk } from './host/sdk';
export type { FileClass } from './storage/file-module';
