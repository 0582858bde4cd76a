import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Scans everything all tests printed and wrote for secrets once the whole run is over.
    globalSetup: ['test/setup/secrets-scan.ts', 'test/setup/sandbox-pool.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // End-to-end suites start real processes (anvil, the sandbox); two cores here.
    maxWorkers: 2,
  },
});
