// The firmware measured by npm run bench (bench/firmware.ts): the agent of the real firmware with 8
// counter sensors (resources=…, one per id) and a 1,024-sample queue, sampling every second against the
// service at url=…. After measureAfter ms it collects garbage and traces what the XS heaps hold, in one
// line the bench reads; the debug build's instruments lines give the deepest stack.
import config from 'mc/config';
import Debug from 'debug';
import Instrumentation from 'instrumentation';
import Timer from 'timer';
import { createAgent } from '../../src/core/agent';
import { errorText } from '../../src/core/errors';
import { createModdableHost } from '../../platforms/moddable/host';
import { sdk } from '../../platforms/moddable/modules';

export default function main(): void {
  const ids = String(config.resources).split(',').map(Number);
  let reading = 0;
  const sensors = ids.map((resource) => ({ resource, every: 1000, read: () => reading++ }));
  const agent = createAgent(createModdableHost(sdk), {
    url: config.url,
    publicKey: config.publicKey,
    token: config.token,
    sensors,
    uplink: { queue: 1024 },
  });
  agent.start().then(
    () => trace('measure: started\n'),
    (e: unknown) => trace('measure: not started: ' + errorText(e) + '\n'),
  );
  Timer.set(() => {
    Debug.gc();
    const used = (name: 'XS Slot Heap Used' | 'XS Chunk Heap Used'): number => Instrumentation.get(Instrumentation.map(name)) ?? -1;
    const stats = agent.stats();
    trace('measure: slotHeapUsed ' + used('XS Slot Heap Used') + ' chunkHeapUsed ' + used('XS Chunk Heap Used') + ' sent ' + stats.sent + ' queued ' + stats.queued + '\n');
  }, Number(config.measureAfter ?? 15000));
}
