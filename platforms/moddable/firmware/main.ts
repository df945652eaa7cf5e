// The firmware: reads `mc/config`, starts the agent with the sensors the board has (ESP32, Pico W) on the
// resources named in `resources=…`, traces every command the platform sends, and a status line now and then.
// A bad or missing config key is one trace line that names it, and nothing starts: no abort.
// Preloadable: the module only defines; the SDK runs the default export once setup/network is done.
import config from 'mc/config';
import Instrumentation from 'instrumentation';
import Net from 'net';
import Resource from 'Resource';
import Timer from 'timer';
import { createAgent } from '../../../src/core/agent';
import type { Agent } from '../../../src/core/agent';
import { errorText } from '../../../src/core/errors';
import { openFlashQueue } from '../flash-queue';
import { createModdableHost } from '../host';
import { files, sdk } from '../modules';
import { firmwareActuators, firmwareSensors } from './sensors';
import { readSettings } from './settings';
import { statusLine } from './status';
import { readTemperatureAdc } from './temperature-adc';
import { hardwareSeed } from './hardware-seed';

/**
 * Samples per request. A backlog leaves in full batches, one after the other: in the ESP32's budget (the
 * lin build's fixed heaps) a batch of the core's default 100 ran the heaps out during its request; one of
 * 50 goes with a third of the collections (docs/moddable.md, "Flash").
 */
const BATCH = 50;

function say(text: string): void {
  trace('feed-agent: ' + text + '\n');
}

export default function main(): void {
  const read = readSettings(config);
  if (read.problems !== undefined) return say('config: ' + read.problems.join('; '));
  const settings = read.settings;
  const slotUsed = Instrumentation.map('XS Slot Heap Used');
  const chunkUsed = Instrumentation.map('XS Chunk Heap Used');
  // The backlog's times are the host's clock (`host`, made below, before any sample is stored).
  const storage = openFlashQueue(files, { path: settings.journal, spillEvery: settings.spillEvery, maxBytes: settings.backlogBytes, now: () => host.now(), log: say });
  let secure: Record<string, unknown> | undefined;
  try {
    if (settings.ca !== '') secure = { certificate: new Resource(settings.ca) };
  } catch (e) {
    return say('ca: ' + settings.ca + ' is not among the app\'s resources (' + errorText(e) + ')');
  }
  const host = createModdableHost(sdk, { storage, secure, http: settings.http });
  const sources = {
    now: host.now,
    // A release build has no instrumentation: map() answers undefined, and the heap is not fed.
    heapUsed: (): number | undefined => {
      const slots = Instrumentation.get(slotUsed), chunks = Instrumentation.get(chunkUsed);
      return slots === undefined || chunks === undefined ? undefined : slots + chunks;
    },
    rssi: (): number | undefined => {
      const rssi: unknown = Net.get('RSSI');
      return typeof rssi === 'number' ? rssi : undefined;
    },
    temperatureAdc: readTemperatureAdc,
    trace,
  };
  const { sensors, skipped } = firmwareSensors(settings, sources);
  const actuators = firmwareActuators(settings, sources);
  let agent: Agent;
  try {
    // Seeded from the board: its waits differ from every other device's and from its own last boot's.
    agent = createAgent(host, { url: settings.url, publicKey: settings.publicKey, token: settings.token, sensors, actuators, uplink: { queue: settings.queue, sendAge: settings.ages, batch: BATCH }, seed: hardwareSeed() });
  } catch (e) {
    return say(errorText(e));
  }
  say('device ' + settings.publicKey + ' at ' + settings.url + ': ' + sensors.length + ' sensor' + (sensors.length === 1 ? '' : 's') +
    ' every ' + settings.every + ' ms, ' + actuators.length + ' command resource' + (skipped.length > 0 ? '; not fed: ' + skipped.join(', ') : ''));
  agent.start().then(
    () => say('started'),
    (e: unknown) => say('not started: ' + errorText(e)),
  );
  if (settings.statusEvery > 0) Timer.repeat(() => trace(statusLine(agent.stats())), settings.statusEvery);
}
