// Runs the benchmark sections and prints them: a readable table, or with --json one JSON object of all
// figures as the last line of output. `--only NAME[,NAME]` runs only the sections named (see SECTIONS).
import { parseArgs } from 'node:util';
import { benchEndToEnd } from './end-to-end';
import { benchFootprint } from './footprint';
import { benchGateway } from './gateway';
import { benchLatency } from './latency';
import { format } from './measure';
import type { BenchRow, BenchSection } from './section';
import { benchService } from './service';
import { benchWire } from './wire';

const SECTIONS: Record<string, () => Promise<BenchSection>> = {
  footprint: benchFootprint,
  service: benchService,
  wire: benchWire,
  node: benchEndToEnd,
  latency: benchLatency,
  gateway: benchGateway,
};

function table(section: BenchSection): string {
  const width = Math.max(...section.rows.map((r) => r.label.length));
  const lines = section.rows.map((r: BenchRow) => {
    const baseline = r.baseline === undefined ? '' : '   baseline ' + format(r.baseline);
    return '  ' + r.label.padEnd(width) + '  ' + format(r.value).padStart(10) + ' ' + r.unit + baseline;
  });
  return [section.title, ...lines, ...(section.table ?? [])].join('\n');
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
