// The property of delivery over seeded runs (test/support/property.ts): nothing accepted is lost, no valid
// reading is set aside, and only unresolved samples are stored twice; the same runs on XS: the probe `property`.
import { describe, expect, it } from 'vitest';
import { runProperty } from '../support/property';
import type { PropertyOptions, PropertyRun } from '../support/property';

async function runs(from: number, to: number, o: PropertyOptions): Promise<PropertyRun[]> {
  const all: PropertyRun[] = [];
  for (let seed = from; seed <= to; seed++) {
    const run = await runProperty(seed, o);
    expect(run.problems, 'seed ' + seed).toEqual([]);
    all.push(run);
  }
  return all;
}

const sum = (all: PropertyRun[], key: keyof PropertyRun): number => all.reduce((n, r) => n + (r[key] as number), 0);

describe('property: nothing accepted is lost, and only unresolved samples can be stored twice', () => {
  it('holds over 1,000 random failure schedules, read-backs failing too: duplicates only of unresolved samples', async () => {
    const all = await runs(1, 1_000, { afterCommitOnly: false, readFaults: true, rich: false });
    // The schedules did reach the fallback: read-backs failed and batches went again unresolved.
    expect(sum(all, 'unresolved')).toBeGreaterThan(0);
  }, 120_000);

  it('stores nothing twice over 500 schedules where every unknown outcome came after the service stored the batch', async () => {
    const all = await runs(1, 500, { afterCommitOnly: true, readFaults: false, rich: false });
    for (const r of all) expect([r.duplicates, r.unresolved, r.reconciled], 'seed ' + r.seed + ': [duplicates, unresolved, reconciled]').toEqual([0, 0, r.ambiguous]);
    expect(sum(all, 'reconciled')).toBeGreaterThan(0);
  }, 120_000);

  it('holds over 1,000 schedules with overflow, refusals beside it, a vanishing resource and handlers that never settle', async () => {
    const all = await runs(1, 1_000, { afterCommitOnly: false, readFaults: true, rich: true });
    // Each ingredient did happen.
    for (const key of ['dropped', 'setAside', 'unresolved', 'commands'] as const) expect(sum(all, key), key).toBeGreaterThan(0);
  }, 180_000);

  it('stores nothing twice with overflow, refusals and a vanishing resource when only answers were lost', async () => {
    const all = await runs(1, 500, { afterCommitOnly: true, readFaults: false, rich: true });
    for (const r of all) expect([r.duplicates, r.unresolved], 'seed ' + r.seed + ': [duplicates, unresolved]').toEqual([0, 0]);
  }, 180_000);
});
