// Writes docs/architecture.md's tables of the delivery engine from RULES (src/core/delivery/rules.ts), through
// test/support/engine-tables.ts; test/core/rules.test.ts fails while the document differs.
// Usage: node scripts/engine-tables.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

const root = new URL('../', import.meta.url);
const out = await build({
  entryPoints: [new URL('test/support/engine-tables.ts', root).pathname],
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  write: false,
});
const tables = await import('data:text/javascript;base64,' + Buffer.from(out.outputFiles[0].text).toString('base64'));
const path = new URL('docs/architecture.md', root);
const doc = readFileSync(path, 'utf8');
const next = tables.withEngineTables(doc);
if (next === doc) {
  console.log('docs/architecture.md: engine tables up to date');
} else {
  writeFileSync(path, next);
  console.log('docs/architecture.md: engine tables written');
}
