import { defineConfig } from 'vitest/config';

// Two projects, and the folder a test sits in says which runs it. `unit`: in-process, no build
// (`npx vitest run --project unit`): test/core, test/docs, test/node, test/service, and every folder named
// `unit` (the Moddable adapter on stand-ins for the SDK, the gateway's and the firmware's pure parts).
// `e2e`: everything else (the scenarios over real HTTP on Node and XS, firmware, the gateway with its
// brokers, child processes of the built CLI, a browser); it builds the CLI and library once for all its
// files (test/support/build-once.ts). `npx vitest run` runs both.
const UNIT = ['test/core/**/*.test.ts', 'test/docs/**/*.test.ts', 'test/node/**/*.test.ts', 'test/service/**/*.test.ts', 'test/**/unit/**/*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT } },
      {
        extends: true,
        test: { name: 'e2e', include: ['test/**/*.test.ts'], exclude: UNIT, globalSetup: ['test/support/build-once.ts'] },
      },
    ],
  },
});
