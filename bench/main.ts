// Runs the benchmark sections and prints them: a readable table, or with --json one JSON object of all
// figures as the last line of output. `--only NAME[,NAME]` runs only the sections named (see SECTIONS).
//
// Each section runs in a process of its own (runSection), and its module is imported only there: the XS
// harness locks its process down with SES (@endo/init), which slows ordinary JavaScript by a third, and a
// section's memory, timers and sockets must not weigh on the next.
import { parseArgs } from 'node:util';
import { format } from './measure';
import { runSection, SECTION_ENV } from './section';
import type { BenchRow, BenchSection } from './section';

const SECTIONS: Record<string, () => Promise<BenchSection>> = {
  footprint: async () => (await import('./footprint')).benchFootprint(),
  engine: async () => (await import('./engine')).benchEngine(),
  service: async () => (await import('./service')).benchService(),
  wire: async () => (await import('./wire')).benchWire(),
  exception: async () => (await import('./exception')).benchException(),
  node: async () => (await import('./end-to-end')).benchEndToEnd(),
  latency: async () => (await import('./latency')).benchLatency(),
  gateway: async () => (await import('./gateway')).benchGateway(),
  dashboard: async () => (await import('./dashboard')).benchDashboard(),
  firmware: async () => (await import('./firmware')).benchFirmware(),
  flash: async () => (await import('./firmware-backlog')).benchFlash(),
  pico: async () => (await import('./pico')).benchPico(),
  esp32: async () => (await import('./esp32')).benchEsp32(),
  answer: async () => (await import('./answer-size')).benchAnswerSize(),
  backlog: async () => (await import('./backlog')).benchBacklog(),
  netfaults: async () => (await import('./netfaults')).benchNetfaults(),
};

function table(section: BenchSection): string {
  const width = Math.max(...section.rows.map((r) => r.label.length));
  const lines = section.rows.map((r: BenchRow) => {
    const baseline = r.baseline === undefined ? '' : '   baseline ' + format(r.baseline);
    return '  ' + r.label.padEnd(width) + '  ' + format(r.value).padStart(10) + ' ' + r.unit + baseline;
  });
  const note = section.note === undefined ? [] : ['  ' + section.note];
  return [section.title, ...note, ...lines, ...(section.table ?? [])].join('\n');
}

const own = process.env[SECTION_ENV];
if (own !== undefined) {
  console.log(JSON.stringify(await SECTIONS[own]()));
} else {
  const { values } = parseArgs({ options: { json: { type: 'boolean' }, only: { type: 'string' } } });
  const names = values.only === undefined ? Object.keys(SECTIONS) : values.only.split(',');
  const unknown = names.filter((name) => !Object.hasOwn(SECTIONS, name));
  if (unknown.length > 0) throw new Error(`--only: no section ${unknown.join(', ')}; the sections are ${Object.keys(SECTIONS).join(', ')}`);
  const json = values.json === true;
  const figures: Record<string, number> = {};
  for (const name of names) {
    const section = runSection(name);
    Object.assign(figures, section.figures);
    // With --json, stdout is the one JSON line; the readable tables (a step's lines among them) go to stderr.
    if (json) console.error(table(section) + '\n');
    else console.log(table(section) + '\n');
  }
  if (json) console.log(JSON.stringify(figures));
}
