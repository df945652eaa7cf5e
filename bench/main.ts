// Runs the benchmark sections and prints them: a readable table, or with --json one JSON object of all
// figures as the last line of output. `--only NAME[,NAME]` runs only the sections named (see SECTIONS).
import { parseArgs } from 'node:util';
import { benchFootprint } from './footprint';
import type { BenchRow, BenchSection } from './section';
import { benchService } from './service';

const SECTIONS: Record<string, () => Promise<BenchSection>> = {
  footprint: benchFootprint,
  service: benchService,
};

function table(section: BenchSection): string {
  const width = Math.max(...section.rows.map((r) => r.label.length));
  const lines = section.rows.map((r: BenchRow) => {
    const baseline = r.baseline === undefined ? '' : '   baseline ' + format(r.baseline);
    return '  ' + r.label.padEnd(width) + '  ' + format(r.value).padStart(10) + ' ' + r.unit + baseline;
  });
  return section.title + '\n' + lines.join('\n');
}

/** Thousands grouped by hand: the XS harness's lockdown (SES) turns toLocaleString into toString. */
function format(n: number): string {
  const [whole, fraction] = String(Math.round(n * 1000) / 1000).split('.');
  return whole.replace(/\B(?=(\d{3})+$)/g, ',') + (fraction === undefined ? '' : '.' + fraction);
}

const { values } = parseArgs({ options: { json: { type: 'boolean' }, only: { type: 'string' } } });
const names = values.only === undefined ? Object.keys(SECTIONS) : values.only.split(',');
const unknown = names.filter((name) => !Object.hasOwn(SECTIONS, name));
if (unknown.length > 0) throw new Error(`--only: no section ${unknown.join(', ')}; the sections are ${Object.keys(SECTIONS).join(', ')}`);
const json = values.json === true;
const figures: Record<string, number> = {};
for (const name of names) {
  const section = await SECTIONS[name]();
  Object.assign(figures, section.figures);
  if (!json) console.log(table(section) + '\n');
}
if (json) console.log(JSON.stringify(figures));
