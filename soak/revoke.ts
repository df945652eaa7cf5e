// The token revoked mid-run, then restored: `feed-agent serve` (a child process, its data in a file) and
// the simulated device (another child, with its durable queue and counters' ledger). The device's token
// is changed in the seed file and the service told with SIGUSR2, then put back the same way. The agent
// must pause on 401, keep every sample, and deliver all of them once the token is accepted again:
// counted from the service's side, nothing lost, nothing stored twice, nothing dropped.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { COUNTERS, counterConfig, deviceEnv, SEED, Sim, summaryOf } from '../test/e2e/support';
import { Served } from '../test/support/serve';
import { tally } from './tally';
import type { Tally } from './tally';

const EVERY_MS = 40;
/** The agent tries a refused token again this often (default 5 min: a soak cannot wait that long). */
const AUTH_RETRY_MS = 1_000;

export interface RevokeOptions {
  /** Sampling time before the token is revoked, while it is, and after it is restored. */
  beforeMs: number;
  revokedMs: number;
  afterMs: number;
  cli: string;
  dir: string;
}

export interface RevokeReport {
  options: RevokeOptions;
  tallies: Tally[];
  /** When the agent first said it was paused (ms into its run), and the most samples it held from then on. */
  pausedAt: number;
  mostQueued: number;
  exitCode: number | null;
  agent: { droppedOverflow: number; queued: number; ambiguous: number; authPaused: boolean };
}

export async function runRevoke(o: RevokeOptions): Promise<RevokeReport> {
  const seedFile = join(o.dir, 'revoke-seed.json');
  const dbFile = join(o.dir, 'revoke.db');
  const durable = join(o.dir, 'revoke-durable');
  const device = SEED.devices[0];
  const writeSeed = (token: string) => writeFileSync(seedFile, JSON.stringify({ ...SEED, devices: [{ ...device, token }] }));
  writeSeed(device.token);
  const service = await Served.start(o.cli, ['--port', '0', '--seed', seedFile, '--db', dbFile]);
  const reload = () => service.reloadSeed(/^seed applied again/);
  let sim: Sim | null = null;
  let report: Omit<RevokeReport, 'tallies'>;
  try {
    // The queue holds the whole pause: 75 samples a second.
    const config = counterConfig(o.dir, 'revoke.json', EVERY_MS, { uplink: { queue: 4096, authRetryMs: AUTH_RETRY_MS, flushMs: 500 } });
    const seconds = String((o.beforeMs + o.revokedMs + o.afterMs) / 1000);
    sim = new Sim(o.cli, ['--config', config, '--durable', durable, '--json', '--duration', seconds, '--drain-timeout', '30'], deviceEnv(service.url));
    await sleep(o.beforeMs);
    writeSeed('revoked-' + device.token);
    await reload();
    const paused = await sim.next((e) => e.type === 'status' && e.authPaused === true, o.revokedMs + 10_000);
    await sleep(o.revokedMs);
    writeSeed(device.token);
    await reload();
    const exitCode = await sim.exited;
    const during = sim.events.slice(sim.events.indexOf(paused));
    const mostQueued = Math.max(...during.filter((e) => e.type === 'status').map((e) => e.queued as number));
    const agent = summaryOf(sim, ['droppedOverflow', 'queued', 'ambiguous', 'authPaused']);
    report = { options: o, pausedAt: paused.elapsedMs, mostQueued, exitCode, agent };
  } finally {
    sim?.kill('SIGKILL');
    await service.stop();
  }
  return { ...report, tallies: tally(dbFile, durable, COUNTERS) };
}

/** The guarantees the run broke, one line each: none, or the soak fails. */
export function revokeProblems(r: RevokeReport): string[] {
  const all = r.tallies[r.tallies.length - 1];
  const problems: string[] = [];
  if (all.lost > 0) problems.push(all.lost + ' accepted samples are not stored');
  if (all.duplicated > 0 || all.foreign > 0 || !all.inOrder) problems.push('stored twice, foreign or out of order: ' + JSON.stringify(all));
  if (r.agent.droppedOverflow > 0 || r.agent.queued > 0 || r.agent.authPaused) problems.push('the agent ended with ' + JSON.stringify(r.agent));
  // The pause held the samples of most of it, all delivered after.
  const held = (0.5 * r.options.revokedMs * 3) / EVERY_MS;
  if (r.mostQueued < held) problems.push('the agent held at most ' + r.mostQueued + ' samples during the pause, not ' + held);
  if (r.exitCode !== 0) problems.push('the simulator exited with ' + r.exitCode);
  return problems;
}

export function revokeText(r: RevokeReport, table: (rows: readonly Tally[]) => string): string {
  const o = r.options;
  return [
    `Token revoked after ${o.beforeMs / 1000} s for ${o.revokedMs / 1000} s (seed file changed, SIGUSR2), then restored; ` +
      `${COUNTERS.length} counters every ${EVERY_MS} ms, the refused token tried again every ${AUTH_RETRY_MS} ms.`,
    '',
    table(r.tallies),
    '',
    `The agent paused ${r.pausedAt} ms into its run and held up to ${r.mostQueued} samples; ${r.agent.droppedOverflow} dropped, ` +
      `${r.agent.queued} still queued, ${r.agent.ambiguous} ambiguous; exit code ${r.exitCode}.`,
  ].join('\n');
}
