// The e2e project's global setup: the CLI and the library built once for the whole run (with type
// declarations, which the package test packs), instead of once per file. Files reach the directory with
// `inject('built')`; it is removed when the run ends.
import type { TestProject } from 'vitest/node';
import { buildInto, workDir } from './build';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The directory `npm run build` would fill (dist/): cli.js, index.js, node.js, service.js, types/. */
    built: string;
  }
}

export default function setup(project: TestProject): () => void {
  const work = workDir('built-');
  buildInto(work.dir, true);
  project.provide('built', work.dir);
  return work.remove;
}
