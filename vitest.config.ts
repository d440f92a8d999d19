import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Tests run against each package's TypeScript sources (the project's own `@claimkit/source` export
// condition, which the published packages do not carry), so no build is needed first.
const SOURCE_CONDITION = '@claimkit/source';
const conditions = [SOURCE_CONDITION, 'node', 'import', 'module', 'default'];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: [SOURCE_CONDITION] } },
  test: {
    reporters: ['default', './scripts/sim-steps-reporter.ts', './scripts/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['packages/*/src/**/*.test.ts', 'tools/*/src/**/*.test.ts', 'apps/dev/src/**/*.test.ts'],
          exclude: ['tools/consumer-test/**', '**/node_modules/**'],
          testTimeout: 30_000,
          // vitest's default (one core less than the machine) is a single worker on 2 cores, which
          // runs the simulator's 1M steps file after file; two workers use both.
          maxWorkers: Math.max(2, availableParallelism() - 1),
        },
      },
      {
        extends: true,
        test: {
          // The released packages as a user installs them (tools/consumer-test/README.md): packs,
          // npm-installs into a scratch project in the OS temp directory, runs the bins and the webhook.
          name: 'consumer',
          include: ['tools/consumer-test/src/**/*.test.ts'],
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 600_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['apps/e2e/src/**/*.test.ts'],
          globalSetup: ['apps/e2e/src/global-setup.ts'],
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 600_000,
        },
      },
    ],
  },
});
