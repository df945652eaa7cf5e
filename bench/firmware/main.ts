// The firmware measured by npm run bench (bench/firmware.ts): the agent of the real firmware with 8
// counter sensors (resources=…, one per id) and a 1,024-sample queue, sampling every second, and a
// command resource (command=…, if given) polled every 5 s as the firmware's default, against the service at url=…
// over the HTTP host http=… (keep-alive or classic), trusting the CA resource ca=… for https. Every
// measureEvery ms it collects garbage and traces what the XS heaps hold and what it sent, in one line the
// bench reads; the debug build's instruments lines give the deepest stack.
import config from 'mc/config';
import Debug from 'debug';
import Instrumentation from 'instrumentation';
import Resource from 'Resource';
import Timer from 'timer';
import { createAgent } from '../../src/core/agent';
import { errorText } from '../../src/core/wire/errors';
import { createModdableHost } from '../../platforms/moddable/host/host';
import { sdk } from '../../platforms/moddable/modules';

export default function main(): void {
  const ids = String(config.resources).split(',').map(Number);
  let reading = 0;
  const sensors = ids.map((resource) => ({ resource, every: 1000, read: () => reading++ }));
  const secure = config.ca ? { certificate: new Resource(String(config.ca)) } : undefined;
  const http = config.http === 'classic' ? 'classic' : 'keep-alive';
  const agent = createAgent(createModdableHost(sdk, { secure, http }), {
    url: config.url,
    publicKey: config.publicKey,
    token: config.token,
    sensors,
    actuators: config.command ? [{ resource: Number(config.command), every: 5000, handle: () => undefined }] : [],
    uplink: { queue: 1024 },
  });
  agent.start().then(
    () => trace('measure: started\n'),
    (e: unknown) => trace('measure: not started: ' + errorText(e) + '\n'),
  );
  Timer.repeat(() => {
    Debug.gc();
    const used = (name: 'XS Slot Heap Used' | 'XS Chunk Heap Used'): number => Instrumentation.get(Instrumentation.map(name)) ?? -1;
    const stats = agent.stats();
    trace('measure: slotHeapUsed ' + used('XS Slot Heap Used') + ' chunkHeapUsed ' + used('XS Chunk Heap Used') + ' sent ' + stats.sent + ' queued ' + stats.queued + '\n');
  }, Number(config.measureEvery ?? 15000));
}
