// Bundled into the XS worker for core.xs.test.ts: runs one probe and answers its JSON.
import { settled } from './host';
import { probes } from './probes';

(globalThis as { runProbe?: unknown }).runProbe = (name: string) => settled(Promise.resolve().then(() => probes[name]()));
