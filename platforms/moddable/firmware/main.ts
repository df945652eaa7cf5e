// The firmware: reads `mc/config`, starts the agent with the readings the board has (ESP32, Pico W) on the
// resources named in `resources=…` and the sensors and outputs its `peripherals` describe
// (../peripherals, docs/peripherals.md), traces every command the platform sends, and a status line now
// and then. A bad or missing config key is one trace line that names it, and nothing starts: no abort.
// Preloadable: the module only defines; the SDK runs the default export once setup/network is done.
import config from 'mc/config';
import Instrumentation from 'instrumentation';
import Net from 'net';
import Preference from 'preference';
import Resource from 'Resource';
import Timer from 'timer';
import Modules from 'modules';
import { createAgent } from '../../../src/core/agent';
import { createRandom } from '../../../src/core/host/random';
import type { Agent } from '../../../src/core/agent';
import type { ActuatorConfig, ReportConfig, SensorConfig } from '../../../src/core/config';
import { UPLINK_DEFAULTS } from '../../../src/core/config';
import type { Host } from '../../../src/core/host/host';
import { errorText } from '../../../src/core/wire/errors';
import { openFlashQueue } from '../storage/flash-queue';
import { createModdableHost } from '../host/host';
import { files, sdk } from '../modules';
import { boardReading, firmwareActuators, firmwareSensors } from './sensors';
import { readSettings } from './settings';
import type { giveWayOnTrial, startUpdates } from './update-esp32';
import { withStoredIdentity } from './stored-identity';
import type { Settings } from './settings';
import { statusLine } from './status';
import { readTemperatureAdc } from './temperature-adc';
import { hardwareSeed } from './hardware-seed';
import { board } from './board';
import { readDescription } from '../peripherals/description';
import { findDrivers } from '../peripherals/drivers';
import type { DriverClass } from '../peripherals/i2c-sensor';
import { openPeripherals } from '../peripherals/open';
import type { Peripherals } from '../peripherals/open';

/**
 * Samples per request. A backlog leaves in full batches, one after the other: in the ESP32's budget (the
 * lin build's fixed heaps) a batch of the core's default 100 ran the heaps out during its request; one of
 * 50 goes with a third of the collections (docs/moddable.md, "Flash").
 */
const BATCH = 50;
/** Updates over the air: a module of the esp32 build only (manifest.json). */
const UPDATES = 'feed-agent/platforms/moddable/firmware/update-esp32';

function say(text: string): void {
  trace('feed-agent: ' + text + '\n');
}

/**
 * How often a board that cannot start (no identity provisioned, a bad key) says why again: a serial
 * console opened later still learns what it waits for (the Pico's USB drops what is said before a host
 * listens). It waits; nothing is retried.
 */
const WAITING_EVERY = 60_000;

function waitFor(text: string): undefined {
  say(text);
  Timer.repeat(() => say(text), WAITING_EVERY);
  return undefined;
}

/** The firmware before its agent starts: what a test build may watch or change, then hand to `run`. */
export interface Firmware {
  settings: Settings;
  host: Host;
  sensors: SensorConfig[];
  actuators: ActuatorConfig[];
  peripherals: Peripherals;
  /** Report by exception of the description's sources, for the core's `AgentConfig.reporting`. */
  reporting: ReportConfig[];
  /** What is not fed, each with why: one part of the start line. */
  skipped: string[];
  /** The settings the preference store gave over the build's (names only). */
  stored: string[];
}

/**
 * Reads the config and opens what it describes. A bad setting is one trace line and nothing more
 * (undefined); a bad entry of the description is one trace line naming every problem, and the rest runs.
 */
export function prepare(config: Record<string, unknown>): Firmware | undefined {
  const identity = withStoredIdentity(config, Preference);
  if (identity.problem !== undefined) say(identity.problem);
  const read = readSettings(identity.config);
  if (read.problems !== undefined) return waitFor('config: ' + read.problems.join('; '));
  const settings = read.settings;
  const slotUsed = Instrumentation.map('XS Slot Heap Used');
  const chunkUsed = Instrumentation.map('XS Chunk Heap Used');
  // The backlog's times are the host's clock (`host`, made below, before any sample is stored).
  const storage = openFlashQueue(files, { path: settings.backlogPath, spillEvery: settings.spillEvery, maxBytes: settings.backlogBytes, now: () => host.now(), log: say });
  let secure: Record<string, unknown> | undefined;
  try {
    if (settings.ca !== '') secure = { certificate: new Resource(settings.ca) };
  } catch (e) {
    return void say('ca: ' + settings.ca + ' is not among the app\'s resources (' + errorText(e) + ')');
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
  const drivers = findDrivers(Modules.host);
  const taken: number[] = [];
  for (const role in settings.resources) taken.push(settings.resources[role as keyof Settings['resources']] as number);
  const description = readDescription(config.peripherals, {
    every: settings.every, commandEvery: settings.commandEvery, board, driver: drivers.lookup, drivers: drivers.names, taken,
  });
  const peripherals = openPeripherals(description.peripherals, {
    board,
    importDriver: (module) => Modules.importNow(module) as DriverClass,
    now: host.now,
    say,
    boardReading: (reading) => boardReading(reading, settings, sources),
  });
  const problems = description.problems.concat(peripherals.problems);
  if (problems.length > 0) say('peripherals: ' + problems.join('; '));
  return {
    settings,
    host,
    sensors: sensors.concat(peripherals.sensors),
    actuators: firmwareActuators(settings, sources).concat(peripherals.actuators),
    peripherals,
    reporting: description.reporting,
    skipped: skipped.concat(peripherals.skipped),
    stored: identity.stored,
  };
}

/** Starts the agent, and a status line now and then. */
export function run(firmware: Firmware): Agent | undefined {
  const { settings, sensors, actuators, peripherals, reporting, skipped } = firmware;
  let agent: Agent;
  try {
    // Seeded from the board: its waits differ from every other device's and from its own last boot's.
    agent = createAgent(firmware.host, {
      url: settings.url, publicKey: settings.publicKey, token: settings.token, sensors, actuators, resources: peripherals.resources,
      reporting, uplink: { queue: settings.queue, sendAge: settings.ages, batch: BATCH }, seed: hardwareSeed(),
    });
  } catch (e) {
    return void say(errorText(e));
  }
  // The roles of resources= (unless a description alone is given), then the description's entries by name.
  const roles = sensors.length - peripherals.sensors.length, commands = actuators.length - peripherals.actuators.length;
  const parts: string[] = [];
  if (roles + commands > 0 || peripherals.names.length === 0) {
    parts.push(roles + ' sensor' + (roles === 1 ? '' : 's') + ' every ' + settings.every + ' ms, ' + commands + ' command resource' + (commands === 1 ? '' : 's'));
  }
  if (peripherals.names.length > 0) parts.push('peripherals: ' + peripherals.names.join(', '));
  if (skipped.length > 0) parts.push('not fed: ' + skipped.join(', '));
  if (firmware.stored.length > 0) parts.push('provisioned: ' + firmware.stored.join(', '));
  say('device ' + settings.publicKey + ' at ' + settings.url + ': ' + parts.join('; '));
  agent.start().then(
    () => {
      say('started');
      // The agent takes readings once it runs: the outputs' levels at boot, then each one applied.
      peripherals.begin((resource, value) => agent.record(resource, value));
    },
    (e: unknown) => say('not started: ' + errorText(e)),
  );
  if (settings.statusEvery > 0) Timer.repeat(() => trace(statusLine(agent.stats(), peripherals.notAnswering())), settings.statusEvery);
  if (Modules.has(UPDATES)) {
    const start = (Modules.importNow(UPDATES) as { startUpdates: typeof startUpdates }).startUpdates;
    start(firmware.host, agent, {
      source: settings.update, version: settings.version, everyMs: settings.updateEvery, trialMs: settings.updateTrial,
      backoff: { baseMs: UPLINK_DEFAULTS.backoffBaseMs, capMs: UPLINK_DEFAULTS.backoffCapMs },
    }, createRandom(hardwareSeed()), say);
  }
  return agent;
}

export default function main(): void {
  const firmware = prepare(config);
  const agent = firmware === undefined ? undefined : run(firmware);
  if (agent === undefined && Modules.has(UPDATES)) {
    (Modules.importNow(UPDATES) as { giveWayOnTrial: typeof giveWayOnTrial }).giveWayOnTrial(String(config.version), say);
  }
}
