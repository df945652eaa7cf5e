// `npm run soak`: the long runs, as tests of their own (vitest runs the TypeScript and the XS harness as
// the test suite does); each prints what it saw. Not part of `npm test`, which runs their short versions.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['soak/**/*.soak.ts'],
    testTimeout: 15 * 60_000,
    hookTimeout: 120_000,
  },
});
