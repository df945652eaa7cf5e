// What the service holds, counted from its side: the feeds in its SQLite file against the counters'
// ledger, which says the highest value each counter sensor had accepted. A counter reads 0, 1, 2, … once
// each, so every value from 0 to that highest one must be stored: a missing one was lost, a repeat is a
// duplicate, and first arrivals out of increasing order are out of order, whatever the agent believes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { format } from '../bench/measure';
import { storedFeeds } from '../test/e2e/support';

export interface Tally {
  /** A resource id, or 'all'. */
  resource: number | 'all';
  /** Values the sensor gave and the agent accepted: 0 to the ledger's highest. */
  accepted: number;
  /** Feeds the service holds. */
  stored: number;
  /** Accepted values the service does not hold. */
  lost: number;
  /** Feeds that repeat a value already stored. */
  duplicated: number;
  /** Values that no counter gave (must be 0). */
  foreign: number;
  /** First arrivals in increasing order. */
  inOrder: boolean;
}

/** The tallies of `resources` in the service file `dbFile`, against the ledger in the durable directory `durable`. */
export function tally(dbFile: string, durable: string, resources: readonly number[]): Tally[] {
  const highest = JSON.parse(readFileSync(join(durable, 'counters.json'), 'utf8')) as Record<string, number>;
  const feeds = storedFeeds(dbFile);
  const rows = resources.map((resource): Tally => {
    const accepted = (highest[resource] ?? -1) + 1;
    const seen = new Set<number>();
    let duplicated = 0;
    let foreign = 0;
    let inOrder = true;
    let last = -1;
    for (const feed of feeds) {
      if (feed.resource !== resource) continue;
      const value = Number(feed.value);
      // A counter gives each value in one form ("7", never "7.0" or "07").
      if (!Number.isInteger(value) || value < 0 || value >= accepted || String(value) !== feed.value) foreign++;
      else if (seen.has(value)) duplicated++;
      else {
        seen.add(value);
        if (value < last) inOrder = false;
        last = value;
      }
    }
    return { resource, accepted, stored: seen.size + duplicated + foreign, lost: accepted - seen.size, duplicated, foreign, inOrder };
  });
  const sum = (key: 'accepted' | 'stored' | 'lost' | 'duplicated' | 'foreign') => rows.reduce((n, r) => n + r[key], 0);
  const all: Tally = {
    resource: 'all',
    accepted: sum('accepted'),
    stored: sum('stored'),
    lost: sum('lost'),
    duplicated: sum('duplicated'),
    foreign: sum('foreign'),
    inOrder: rows.every((r) => r.inOrder),
  };
  return [...rows, all];
}

/**
 * What every soak run must hold, from the last (`all`) row of its tallies: nothing lost, nothing foreign,
 * first arrivals in order, no more duplicates than the agent's `unresolved` samples, a clean exit.
 */
export function deliveryProblems(tallies: readonly Tally[], unresolved: number, exitCode: number | null): string[] {
  const all = tallies[tallies.length - 1];
  const problems: string[] = [];
  if (all.lost > 0) problems.push(all.lost + ' accepted samples are not stored');
  if (all.foreign > 0) problems.push(all.foreign + ' stored values no counter gave');
  if (!all.inOrder) problems.push('values arrived out of order');
  if (all.duplicated > unresolved) problems.push(all.duplicated + ' duplicates, more than the ' + unresolved + ' unresolved samples');
  if (exitCode !== 0) problems.push('the simulator exited with ' + exitCode);
  return problems;
}

/** The tallies as a Markdown table (README, Guarantees). */
export function tallyTable(rows: readonly Tally[]): string {
  const lines = ['| resource | accepted | stored | lost | duplicated | in order |', '|---|--:|--:|--:|--:|---|'];
  for (const r of rows) {
    lines.push(`| ${r.resource} | ${format(r.accepted)} | ${format(r.stored)} | ${format(r.lost)} | ${format(r.duplicated)} | ${r.inOrder ? 'yes' : 'no'} |`);
  }
  return lines.join('\n');
}
