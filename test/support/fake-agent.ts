// An agent on the fake service and a virtual clock, for Node tests (test/core): the start jitter off, set-asides
// collected. On Node a macrotask turn lets every promise chain the agent started run to its end.
import { createAgent } from '../../src/core/agent';
import type { AgentConfig, SetAside, UplinkConfig } from '../../src/core/config';
import type { Host, QueueStorage } from '../../src/core/host/host';
import { FakeService } from './fake-service';
import type { FakeResource } from './fake-service';
import { VirtualClock } from './virtual-clock';

export interface FakeAgentOptions {
  storage?: QueueStorage;
  /** Changes the host the agent gets (the fake service's, on the virtual clock). */
  host?: (host: Host, clock: VirtualClock) => Host;
}

export const newClock = (): VirtualClock => new VirtualClock(() => new Promise((resolve) => setImmediate(resolve)));

export function fakeAgent(resources: FakeResource[], config: Partial<AgentConfig>, uplink: Partial<UplinkConfig>, options: FakeAgentOptions = {}) {
  const clock = newClock();
  const service = new FakeService(clock, resources);
  const setAside: SetAside[] = [];
  const host = service.host(options.storage);
  const agent = createAgent(options.host?.(host, clock) ?? host, {
    url: 'http://127.0.0.1:9',
    publicKey: 'KEY',
    token: service.token,
    seed: 7,
    onSetAside: (s) => setAside.push(s),
    ...config,
    uplink: { startJitterMs: 0, ...uplink },
  });
  return { clock, service, agent, setAside };
}
