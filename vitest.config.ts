import { defineConfig } from 'vitest/config';

// Two projects: `unit` (the core, the Node adapter, the local service, the Moddable adapter on stand-ins
// for the SDK and the gateway's pure parts, in-process: `npx vitest run --project unit` needs no build)
// and `e2e` (the scenarios over real HTTP on Node and XS, firmware, the gateway with its brokers, child
// processes of the built CLI, a browser). `npx vitest run` runs both; the e2e project builds the CLI and
// library once for all its files (test/support/build-once.ts).
// The service's tests that run the built CLI, or wait 8 s of real time on an idle connection: e2e.
const NOT_UNIT = ['test/service/cli.test.ts', 'test/service/keep-alive.test.ts'];
// In folders of the e2e project, but in-process and without the build: unit.
const UNIT_TOO = [
  'test/moddable/adapter.node.test.ts',
  'test/moddable/firmware.test.ts',
  'test/moddable/flash-queue.test.ts',
  'test/moddable/manifest.test.ts',
  'test/gateway/config.test.ts',
  'test/gateway/receipts.test.ts',
  'test/gateway/window-memory.test.ts',
  'test/firmware/instruments.test.ts',
  'test/firmware/status-line.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/core/**/*.test.ts', 'test/docs/**/*.test.ts', 'test/node/**/*.test.ts', 'test/service/**/*.test.ts', ...UNIT_TOO], exclude: NOT_UNIT },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/*.test.ts', 'test/e2e/**/*.test.ts', 'test/xs/**/*.test.ts', 'test/moddable/**/*.test.ts', 'test/firmware/**/*.test.ts', 'test/gateway/**/*.test.ts', ...NOT_UNIT],
          exclude: UNIT_TOO,
          globalSetup: ['test/support/build-once.ts'],
        },
      },
    ],
  },
});
