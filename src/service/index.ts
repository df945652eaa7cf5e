// The local service as a library: start it in-process (port 0 by default) and talk HTTP to its `url`.
export { createService, startService } from './server';
export type { DemoDevice, RunningService, Service, ServiceLimits, ServiceOptions, ServiceTimeouts } from './server';
export type { RateLimit } from './rate-limit';
export type { DashboardOptions } from './dashboard';
export { DEMO_ACTUATORS, DEMO_PUBLIC_KEY, DEMO_RESOURCES, DEMO_SEED, DEMO_TOKEN, demoFleetDevice, demoFleetSeed, MAX_DEMO_DEVICES } from './demo';
export { checkSeed, parseSeed, SeedError } from './seed';
export type { Seed, SeedDevice, SeedResource, SeedSubtype } from './seed';
