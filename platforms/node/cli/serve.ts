// `feed-agent serve`: the local service on the command line (docs/interface.md, "The local service's
// command line"; every option in docs/service.md). The first line on stdout is exactly `listening on http://HOST:PORT`; the second is the
// dashboard's URL (docs/dashboard.md).
import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { LIMITS } from '../../../src/core/wire/wire';
import { checkSeed, DEMO_SEED, demoFleetDevice, MAX_DEMO_DEVICES, startService } from '../../../src/service';
import type { DemoDevice, RunningService, Seed, ServiceOptions } from '../../../src/service';
import { readJsonFile } from './json-file';
import { listenHost, listening, listenPort, warnIfExposed } from './listen';
import { integer, parseOptions, UsageError } from './usage';

const HELP = `usage: feed-agent serve [options]

  --host HOST             address to listen on (default 127.0.0.1); without --seed, only a loopback one
                          unless --allow-demo-token
  --port PORT             port; 0 picks a free one (default 8080); not one that browsers and fetch refuse
                          (6000, 6665-6669, …: the fetch standard's "bad ports")
  --seed FILE             devices, resources and subtypes to start with (default: a built-in demo device)
  --demo-devices N        without --seed: N devices like the demo device, to load-test with
                          \`feed-agent simulate --devices N\` (default 1)
  --db FILE               SQLite file to keep the data in (default: in memory)
  --max-ids N             ids allowed in one path (default ${LIMITS.maxIdsInPath})
  --max-elements N        elements allowed in one operation-4 body (default ${LIMITS.maxBatchElements})
  --max-body-bytes N      request body limit (default ${LIMITS.maxBodyBytes})
  --rate-limit RPS[:BURST]  per-device request rate limit, answered with 429 (default: none)
  --password PASSWORD     the dashboard's password (or FEED_AGENT_DASHBOARD_PASSWORD); default: none on a
                          loopback host, a random one, printed, on any other
  --allow-demo-token      without --seed, serve the demo devices on a --host other than loopback: their
                          tokens are printed in the README, so anyone who reaches the port can write
  --firmware DIR          serve the firmware images of DIR, each named <version>.bin, for updates over
                          the air: GET /firmware offers the newest (docs/interface.md, "Firmware updates")

With --seed, SIGUSR2 applies the file again (e.g. a device's new token). SIGINT or SIGTERM stops;
SIGHUP (the terminal closed) ends it. Exit status: 0 after a stop, 2 on bad input (an option, a seed file,
a --host that is not this machine's, a --db in a directory that does not exist), 1 when it cannot start
(the port is taken, the --db file is in use).`;

export const serve = {
  summary: 'run the local service (the six operations over HTTP)',
  run: runServe,
};

async function runServe(args: string[]): Promise<void> {
  const values = parseOptions('serve', args, {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '8080' },
    seed: { type: 'string' },
    'demo-devices': { type: 'string' },
    db: { type: 'string' },
    'max-ids': { type: 'string' },
    'max-elements': { type: 'string' },
    'max-body-bytes': { type: 'string' },
    'rate-limit': { type: 'string' },
    password: { type: 'string' },
    'allow-demo-token': { type: 'boolean' },
    firmware: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help === true) {
    console.log(HELP);
    return;
  }
  const demo = values.seed === undefined ? { allowed: values['allow-demo-token'] === true, instead: '--seed FILE with tokens of your own' } : null;
  const host = listenHost(values.host, demo);
  const password = values.password ?? (process.env.FEED_AGENT_DASHBOARD_PASSWORD || undefined);
  const options: ServiceOptions = {
    host,
    dashboard: { password },
    port: listenPort(values.port),
    dbFile: values.db === undefined ? undefined : dbFile(values.db),
    firmwareDir: values.firmware === undefined ? undefined : firmwareDir(values.firmware),
    limits: {
      ...(values['max-ids'] !== undefined && { maxIdsInPath: integer(values['max-ids'], '--max-ids', 1) }),
      ...(values['max-elements'] !== undefined && { maxBatchElements: integer(values['max-elements'], '--max-elements', 1) }),
      ...(values['max-body-bytes'] !== undefined && { maxBodyBytes: integer(values['max-body-bytes'], '--max-body-bytes', 1) }),
    },
  };
  if (values['rate-limit'] !== undefined) {
    options.rateLimit = rateLimit(values['rate-limit']);
  }
  let fleet = 1;
  if (values['demo-devices'] !== undefined) {
    fleet = integer(values['demo-devices'], '--demo-devices', 1, MAX_DEMO_DEVICES);
    if (values.seed !== undefined) throw new UsageError('--demo-devices makes the demo fleet; it cannot be combined with --seed');
    options.demoDevices = fleet;
  }
  if (values.seed !== undefined) options.seed = asUsage(() => readSeed(values.seed!));

  const service = await listening(() => startService(options), host);
  // Before the first line, which tells whoever waits for it that the service is ready for signals too.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void service.close());
  // Not SIGHUP, the daemons' reload signal: this service runs in a terminal, and a closed terminal must
  // end it (freeing its port and its --db file) as it ends any program. SIGUSR1 is Node's debugger's.
  process.on('SIGUSR2', () => reload(service, values.seed));
  console.log(`listening on ${service.url}`);
  const dashboard = service.dashboard!;
  // A password given by flag or environment is the user's own: it is not printed back.
  const access = dashboard.password === null ? '' : password === undefined ? `  (password ${dashboard.password}, any user name)` : '  (with your password)';
  console.log(`dashboard ${dashboard.url}${access}`);
  if (options.firmwareDir !== undefined) console.log(`firmware ${service.url}/firmware  (the images of ${options.firmwareDir})`);
  if (service.demo !== undefined && fleet > 1) console.log(fleetText(service.url, fleet));
  if (service.demo !== undefined) console.log(demoText(service.url, service.demo));
  if (service.demo !== undefined) warnIfExposed('serve', host);
}

/** --db FILE: its directory must exist (SQLite creates the file, not the folders). */
function dbFile(file: string): string {
  const dir = dirname(file);
  if (!isFolder(dir)) throw new UsageError(`--db ${file}: the directory ${dir} does not exist`);
  return file;
}

/** --firmware DIR: a folder that is there. */
function firmwareDir(dir: string): string {
  if (!isFolder(dir)) throw new UsageError(`--firmware ${dir}: not a folder`);
  return dir;
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** --rate-limit RPS[:BURST]. */
function rateLimit(text: string): ServiceOptions['rateLimit'] {
  const match = /^(\d+)(?::(\d+))?$/.exec(text);
  const rps = Number(match?.[1]);
  const burst = match?.[2] === undefined ? undefined : Number(match[2]);
  if (match === null || !Number.isSafeInteger(rps) || rps < 1 || (burst !== undefined && (!Number.isSafeInteger(burst) || burst < 1))) {
    throw new UsageError(`--rate-limit must be RPS or RPS:BURST, requests per second and a burst as positive integers (e.g. 10 or 10:20), not ${JSON.stringify(text)}`);
  }
  return { requestsPerSecond: rps, ...(burst !== undefined && { burst }) };
}

function readSeed(file: string): Seed {
  return checkSeed(readJsonFile(file, 'the seed file'));
}

/**
 * SIGUSR2 applies the seed file again, so that a device's token can be changed (or revoked, and restored)
 * while the service runs: no network surface, only whoever may signal the process. A bad file changes nothing.
 */
function reload(service: RunningService, file: string | undefined): void {
  if (file === undefined) {
    console.error('feed-agent serve: SIGUSR2: there is no --seed file to apply again');
    return;
  }
  try {
    service.applySeed(readSeed(file));
    console.log(`seed applied again from ${file}`);
  } catch (error) {
    console.error(`feed-agent serve: SIGUSR2: the seed was not applied, nothing changed: ${(error as Error).message}`);
  }
}

/** What a newcomer needs to talk to the demo device at once. */
function demoText(url: string, demo: DemoDevice): string {
  const subtypes = new Map(DEMO_SEED.subtypes.map((s) => [s.id_resource_subtype, s]));
  const resources = DEMO_SEED.devices[0].resources.map((r) => {
    const s = subtypes.get(r.id_resource_subtype)!;
    const rule = s.data_restriction_regex ?? `${s.data_restriction_begin_range}..${s.data_restriction_end_range}`;
    return `    ${r.id_resource}  ${r.name.padEnd(18)} ${s.name_i18n} (${rule})`;
  });
  const base = `${url}/api/device/${demo.publicKey}`;
  return [
    'demo device (no --seed given):',
    `  public key  ${demo.publicKey}`,
    `  token       ${demo.token}`,
    '  resources:',
    ...resources,
    'try:',
    `  curl ${base}/resource/${demo.resources[0]}`,
    `  curl -X POST -H 'Authorization: Bearer ${demo.token}' -H 'Content-Type: application/json' \\`,
    `       -d '{"input": 21.5}' ${base}/resource/${demo.resources[1]}/feeds`,
  ].join('\n');
}

/** The demo fleet: how its keys, tokens and resources go, and the command that simulates all of it. */
function fleetText(url: string, n: number): string {
  const row = (k: number) => {
    const d = demoFleetDevice(k);
    return `  ${String(k + 1).padEnd(7)} ${d.publicKey}  ${d.token}  ${d.resources[0]}-${d.resources[d.resources.length - 1]}`;
  };
  const shown = n <= 4 ? Array.from({ length: n }, (_, k) => row(k)) : [row(0), row(1), '  …', row(n - 1)];
  return [
    `demo fleet (--demo-devices ${n}): ${n} devices like the demo device below`,
    '  device  public key                token                     resources',
    ...shown,
    `simulate all of them: npx feed-agent simulate --url ${url} --devices ${n}`,
  ].join('\n');
}

/** A bad seed file is bad input, as a bad option is; the same file failing on SIGUSR2 changes nothing. */
function asUsage<T>(read: () => T): T {
  try {
    return read();
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}
