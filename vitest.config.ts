import { defineConfig } from 'vitest/config';

// Two projects: `unit` (the core, the Node adapter and the local service, in-process: `npx vitest run
// --project unit` answers in seconds) and `e2e` (the scenarios over real HTTP on Node and XS, the Moddable
// adapter, firmware, child processes of the built CLI, a browser). `npx vitest run` runs both; the e2e
// project builds the CLI and library once for all its files (test/support/build-once.ts).
const BUILT_CLI = 'test/service/cli.test.ts';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/core/**/*.test.ts', 'test/node/**/*.test.ts', 'test/service/**/*.test.ts'], exclude: [BUILT_CLI] },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/*.test.ts', 'test/e2e/**/*.test.ts', 'test/xs/**/*.test.ts', 'test/moddable/**/*.test.ts', 'test/firmware/**/*.test.ts', BUILT_CLI],
          globalSetup: ['test/support/build-once.ts'],
        },
      },
    ],
  },
});
