// What each fault below HTTP costs a Node agent at the default settings (issue 38): every kind of the fault
// matrix (test/support/netfault-rig.ts) at once, each with a service, a proxy and agents of its own, the
// fault lasting 3 minutes, then healthy until the running agent delivers again. Figures, over the kinds:
// - netfaults.requestsPerFaultMinute: the most requests the running agent made in the second minute of the
//   fault (its own count), when its backoff has grown;
// - netfaults.startSettleMs: the longest start() of an agent started 1 s into the fault;
// - netfaults.resumeMs: the longest time from the fault's end to the running agent's first delivery, beside
//   netfaults.resumeBoundMs, the backoff's own bound after a fault of 3 minutes where requests time out
//   (plus a request's timeout and the read-back's settle).
// The table beside them has each kind's row: requests in minute 2, start(), resume, lost, duplicates.
import { join } from 'node:path';

import { workDir } from '../test/support/build';
import { deviceScript, FAULT_KINDS, requestsWithin, resumeWithin, runKind, TIMING_OUT } from '../test/support/netfault-rig';
import type { KindRun } from '../test/support/netfault-rig';
import { format } from './measure';
import type { BenchSection } from './section';

const FAULT_MS = 180_000;
const MINUTE_MS = 60_000;
/** How long past the backoff's bound a kind may take to deliver again before it counts as not resumed. */
const SLACK_MS = 30_000;

function minuteTwo(run: KindRun): number {
  return requestsWithin(run, run.from + MINUTE_MS, run.from + 2 * MINUTE_MS);
}

export async function benchNetfaults(): Promise<BenchSection> {
  const work = workDir('bench-netfaults-');
  try {
    const script = await deviceScript(work.dir);
    const runs = await Promise.all(
      FAULT_KINDS.map((kind) => runKind(kind, { faultMs: FAULT_MS, dir: join(work.dir, kind), script, resumeLimitMs: resumeWithin(kind, FAULT_MS) + SLACK_MS })),
    );
    const resumed = runs.map((r) => r.resumeMs ?? Infinity);
    const bound = Math.max(...FAULT_KINDS.map((kind) => resumeWithin(kind, FAULT_MS)));
    const most = Math.max(...runs.map(minuteTwo));
    const start = Math.max(...runs.map((r) => r.start.ms));
    const resume = Math.max(...resumed);
    const rows = runs.map((r) => {
      const all = r.tallies[r.tallies.length - 1];
      const resume = r.resumeMs === null ? 'none' : format(Math.round(r.resumeMs)) + ' ms';
      const started = format(Math.round(r.start.ms)) + ' ms' + (r.start.failed === null ? '' : ' (rejected)');
      return `  | ${r.kind} | ${format(minuteTwo(r))} | ${started} | ${resume}${TIMING_OUT.has(r.kind) ? ' (requests time out)' : ''} | ${format(all.lost)} | ${format(all.duplicated)} (unresolved ${format(r.unresolved)}) |`;
    });
    return {
      title: `Faults below HTTP, ${FAULT_MS / 60_000} minutes each, a Node agent at the default settings (all kinds at once)`,
      rows: [
        { label: 'requests in the second minute of a fault, the most over the kinds', value: most, unit: 'requests' },
        { label: 'start() during a fault, the longest', value: Math.round(start), unit: 'ms' },
        { label: 'from the fault\'s end to the first delivery, the longest', value: Math.round(resume), unit: 'ms' },
        { label: 'the backoff\'s bound for that, after 3 minutes, requests timing out', value: bound, unit: 'ms' },
      ],
      table: ['  | kind | requests in minute 2 | start() settles in | resume in | lost | duplicates |', '  |---|--:|--:|--:|--:|--:|', ...rows],
      figures: {
        'netfaults.requestsPerFaultMinute': most,
        'netfaults.startSettleMs': Math.round(start),
        'netfaults.resumeMs': Math.round(resume),
        'netfaults.resumeBoundMs': bound,
      },
    };
  } finally {
    work.remove();
  }
}
