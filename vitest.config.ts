import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          pool: 'threads',
          sequence: { groupOrder: 0 },
          testTimeout: 10_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/workflows/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          pool: 'forks',
          sequence: { groupOrder: 1 }, // after the unit tests
          maxWorkers: 2,
          globalSetup: ['test/helpers/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
