// Runs every benchmark section and prints them: a readable table, or with --json one JSON object of
// all figures as the last line of output.
import { benchDashboard } from './dashboard';
import { benchFirmware } from './firmware';
import { benchFootprint } from './footprint';
import type { BenchRow, BenchSection } from './section';
import { benchService } from './service';

const SECTIONS: (() => Promise<BenchSection>)[] = [benchFootprint, benchService, benchDashboard, benchFirmware];

function table(section: BenchSection): string {
  const width = Math.max(...section.rows.map((r) => r.label.length));
  const lines = section.rows.map((r: BenchRow) => {
    const baseline = r.baseline === undefined ? '' : '   baseline ' + format(r.baseline);
    return '  ' + r.label.padEnd(width) + '  ' + format(r.value).padStart(10) + ' ' + r.unit + baseline;
  });
  return section.title + '\n' + (section.note === undefined ? '' : '  ' + section.note + '\n') + lines.join('\n');
}

/** Thousands grouped by hand: the XS harness's lockdown (SES) turns toLocaleString into toString. */
function format(n: number): string {
  const [whole, fraction] = String(Math.round(n * 1000) / 1000).split('.');
  return whole.replace(/\B(?=(\d{3})+$)/g, ',') + (fraction === undefined ? '' : '.' + fraction);
}

const json = process.argv.slice(2).includes('--json');
const figures: Record<string, number> = {};
for (const run of SECTIONS) {
  const section = await run();
  Object.assign(figures, section.figures);
  if (!json) console.log(table(section) + '\n');
}
if (json) console.log(JSON.stringify(figures));
