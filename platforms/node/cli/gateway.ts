// `feed-agent gateway`: field devices on MQTT and Modbus TCP, described in a config file, delivered to the
// service (docs/gateway.md). `--demo` runs it against an embedded broker, a simulated Modbus device and
// the local service, all in this process.
import { dirname, resolve } from 'node:path';

import { GatewayConfigError, MissingPeerError, parseGatewayConfig, startGateway } from '../gateway';
import type { Gateway, GatewayConfig } from '../gateway';
import { readJsonFile } from './json-file';
import { handleStopSignals } from './stop-signals';
import { parseOptions, UsageError } from './usage';

const HELP = `usage: feed-agent gateway --config FILE
       feed-agent gateway --demo [--field-only]

  --config FILE   the gateway's config (JSON): the service, the broker, the Modbus devices, and for each
                  service device its key, where its token is read from, and where each resource's readings
                  come from (docs/gateway.md has the reference and a full example)
  --check         with --config: check the file, list every mistake, and exit
  --demo          an embedded MQTT broker (127.0.0.1:1884), a simulated Modbus device (127.0.0.1:5020),
                  field devices publishing and the local service with three devices (http://127.0.0.1:8090,
                  dashboard at /), served by a gateway running examples/gateway.json
  --field-only    with --demo: everything but the gateway, for \`feed-agent gateway --config
                  examples/gateway.json\` in another terminal (README)

What is guaranteed:
  - A reading from MQTT is acknowledged to the broker (PUBACK, QoS 1, persistent session) only once it is
    written to its device's durable queue on disk. Killed at any instant (kill -9), the gateway loses
    nothing the broker handed it: the broker hands over again what was not acknowledged, and the gateway
    recognises the messages it had stored already (a message is stored twice only if the process dies
    between two writes of one reading, microseconds apart).
  - Each write reaches the operating system before the PUBACK, so killing the process loses nothing. What
    a power cut can take depends on queue.fsync: "interval" (default), the readings of the last
    fsyncIntervalMs (1 s); "always", nothing acknowledged (an fsync per write: slower); "never", what the
    OS had not written back (Linux: about 30 s).
  - Readings go to the service at least once, oldest first, paced by service.requestsPerSecond for the
    whole gateway; a duplicate is possible only after a request whose outcome was unknown, and counted.
  - A device that cannot deliver (its token refused, the service down) pauses alone: its readings wait
    in its backlog on disk, behind a small queue in memory, up to devices[].overflowMiB (64 MiB by
    default), and are delivered oldest first once it can, after a restart too. Only at that bound do
    MQTT acknowledgements wait (the broker keeps the messages; as MQTT acknowledges in order, every
    device on that broker connection waits) and is a Modbus reading lost (counted, with the reason).

Signals: SIGHUP reloads the config file (a removed device drains and closes its queue, an added one
starts, nothing is lost; a file with mistakes is refused and the running config stays); SIGINT or SIGTERM
stops: reading stops, every queue drains for up to 10 s, what is left stays on disk for the next start; a
second one, 500 ms or more after the first (npm's copy of one Ctrl-C comes sooner), quits at once.
Exit status: 0 after a stop, 130 after a second signal, 2 on a bad config (every mistake listed), 1 when it cannot start (a missing
package, a port in use).`;

export const gateway = {
  summary: 'serve field devices on MQTT and Modbus TCP from a config file',
  run: runGateway,
};

async function runGateway(args: string[]): Promise<void> {
  const values = parseOptions('gateway', args, {
    config: { type: 'string' },
    check: { type: 'boolean' },
    demo: { type: 'boolean' },
    'field-only': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help === true) {
    console.log(HELP);
    return;
  }
  if (values.demo === true) {
    if (values.config !== undefined || values.check === true) throw new UsageError('--demo runs its own config: no --config or --check with it');
    const { runDemo } = await import('../gateway/demo');
    const demo = await runDemo({ fieldOnly: values['field-only'] === true });
    handleSignals(() => demo.close(), null);
    return;
  }
  if (values['field-only'] === true) throw new UsageError('--field-only goes with --demo');
  if (values.config === undefined) throw new UsageError('--config FILE is required (see feed-agent gateway --help)');
  const file = values.config;
  const config = readConfig(file);
  if (values.check === true) {
    console.log(`${values.config}: ${config.devices.length} devices, no mistakes`);
    return;
  }
  // Signals are handled from the first moment: starting takes a while (each device looks its resources up
  // at the gateway's request rate), and SIGHUP's default would end the process; one that comes meanwhile
  // acts on the gateway once it is up.
  const starting = startGateway(config);
  handleSignals(() => starting.then((g) => g.stop()), () => starting.then((g) => g.reload(readConfig(file))));
  let running: Gateway;
  try {
    running = await starting;
  } catch (e) {
    if (e instanceof MissingPeerError) throw new Error(e.message);
    throw e;
  }
  console.log(`feed-agent gateway: ${config.devices.length} devices${running.metricsUrl === null ? '' : `, metrics at ${running.metricsUrl}`}`);
}

/** Reads and checks the config file, named as the user did; every mistake in one UsageError (exit 2). */
function readConfig(file: string): GatewayConfig {
  const json = readJsonFile(file, 'the config');
  try {
    return parseGatewayConfig(json, process.env, dirname(resolve(file)));
  } catch (e) {
    if (e instanceof GatewayConfigError) throw new UsageError(`${file}: ${e.message}`);
    throw e;
  }
}

/** SIGHUP reloads the file; SIGINT and SIGTERM stop with a drain; a second one quits at once. */
function handleSignals(stop: () => Promise<void>, reload: (() => Promise<void>) | null): void {
  let stopping = false;
  let reloading: Promise<void> = Promise.resolve();
  handleStopSignals(
    (signal) => {
      stopping = true;
      console.log(`feed-agent gateway: ${signal}: stopping, draining the queues (up to 10 s)`);
      void reloading.then(stop).then(() => process.exit(0));
    },
    (signal) => {
      console.log(`feed-agent gateway: ${signal} again: quitting; queued readings stay on disk`);
      process.exit(130);
    },
  );
  process.on('SIGHUP', () => {
    if (reload === null || stopping) return;
    console.log('feed-agent gateway: SIGHUP: reloading the config');
    reloading = reloading.then(reload).catch((e: unknown) => {
      console.log(`feed-agent gateway: SIGHUP: reload refused, the running config stays: ${(e as Error).message}`);
    });
  });
}
