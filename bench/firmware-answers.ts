// What an answer of 1 MB costs the firmware's chunk heap, beside ordinary answers (issue 24): the
// firmware of manifest.json, built for lin with a chunk heap that grows (32 KB, then by 1 KB) instead of
// the fixed one of the fit test, so that XS's "Chunk available" (the instruments lines of a debug build)
// is the high-water mark of what the heap had to hold: XS collects before it grows. Each host runs 40 s
// against the local service behind the platform proxy of the firmware tests, passing, then 20 s more
// (the control: how far ordinary answers alone still move the mark), then answers one batch with 1 MB
// that has a Content-Length and one with 1 MB chunked, then passes again 20 s. The figures are the heap's
// size at those three points, in lin bytes.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Seed } from '../src/service/seed';
import { startService } from '../src/service';
import { FaultProxy } from '../test/support/fault-proxy';
import { PlatformProxy } from '../test/firmware/platform-proxy';
import { Simulator, buildApp } from '../test/firmware/sdk';
import type { Sdk } from '../test/firmware/sdk';

const HEAP = { initial: 32_768, incremental: 1_024 };
const STEADY_MS = 40_000;
const CONTROL_MS = 20_000;
const AFTER_MS = 20_000;
const MB = 1_048_576;

export interface AnswerPeaks {
  /** "Chunk available" after 40 s of ordinary answers, after 20 s more of them, and after the two 1 MB answers and 20 s more. */
  before: number;
  control: number;
  after: number;
}

export async function answerPeaks(sdk: Sdk, out: string, seed: Seed, host: 'keep-alive' | 'classic'): Promise<AnswerPeaks> {
  const app = join(out, 'firmware-growing');
  mkdirSync(app, { recursive: true });
  writeFileSync(join(app, 'manifest.json'), JSON.stringify({ include: [resolve('manifest.json')], creation: { chunk: HEAP } }, null, '\t'));
  const service = await startService({ seed });
  const fault = await FaultProxy.start(service.url);
  const platform = await PlatformProxy.start(fault.url);
  let simulator: Simulator | null = null;
  try {
    const device = seed.devices[0];
    const [uptime, heap, , command] = device.resources.map((r) => r.id_resource);
    const build = buildApp(sdk, app, out, {
      url: platform.url,
      publicKey: device.public_key,
      token: device.token,
      resources: 'uptime:' + uptime + ',heap:' + heap + ',command:' + command,
      every: 1000,
      statusEvery: 0,
      backlogPath: join(out, 'answers-' + host + '.q'),
      http: host,
    });
    // mcsim copies what it runs into its own config folder, which must exist.
    const config = join(out, 'config-answers');
    mkdirSync(config, { recursive: true });
    simulator = new Simulator(sdk, build.library, config);
    await simulator.waitFor(/^feed-agent: started$/, 30_000);
    await sleep(STEADY_MS);
    const available = (): number => Math.max(...(simulator as Simulator).instruments().map((i) => i['Chunk available']));
    const before = available();
    await sleep(CONTROL_MS);
    const control = available();
    for (const chunked of [false, true]) {
      const from = Date.now();
      platform.play = { do: 'large', bytes: MB, chunked };
      while (!platform.since(from, 'create').some((t) => t.played === 'large')) await sleep(250);
      platform.play = { do: 'pass' };
    }
    await sleep(AFTER_MS);
    if (!simulator.alive) throw new Error(host + ': mcsim exited under the 1 MB answers');
    return { before, control, after: available() };
  } finally {
    await simulator?.kill();
    await platform.close();
    await fault.close();
    await service.close();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
