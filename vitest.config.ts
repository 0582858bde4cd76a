import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Three layers, chosen by the file's name (docs/testing.md):
//   unit  test/**/*.test.ts       in-process: src/ through vitest, no build, no binary
//   cli   test/**/*.cli.test.ts   the built binary (bin/loopsign.js → dist/), no sandbox
//   e2e   test/**/*.e2e.test.ts   the built binary against a sandbox (anvil, contracts, the service)
// `npm run test:unit` runs the first alone; `npm test` runs all three, as CI does.
const CLI = 'test/**/*.cli.test.ts';
const E2E = 'test/**/*.e2e.test.ts';
// Scans everything each project's tests printed and wrote for secrets once its run is over.
const SECRETS = 'test/setup/secrets-scan.ts';
// The run's temporary folder (test/setup/tmp.ts): first, so that its teardown runs after the secrets scan's.
const TMP = 'test/setup/tmp.ts';
// Builds dist/ when src/ is newer than the last build (test/setup/build.ts).
const BUILD = 'test/setup/build.ts';
// One sandbox per worker, started when a file first asks for it, shared by the files that worker runs
// (test/setup/sandbox-pool.ts; LOOPSIGN_TEST_SANDBOX=per-file gives each file its own).
const SANDBOXES = 'test/setup/sandbox-pool.ts';
// A timeout here only catches a hang: a slow or loaded machine must never fail a test that would pass (issue 23).
const HANG = 600_000;
// isolate: false (every project): a worker runs its files one after another in one process, sharing its module
// graph, instead of each file in a new process that loads vitest, viem, the helpers and the src/ they import again.
// Collecting every file without running a test (`-t` matching none; user + sys of vitest and its children; 3 runs each,
// interleaved, on the loaded 2-core machine) cost cli 6.2-6.7 CPU-s isolated, 3.6-3.7 not; e2e 13.8-14.3, 5.2-5.3
// (threads instead of forks: within 0.5). The unit project, which imports src/ itself, went from 64-67 user + 10-12
// sys CPU-s to 47 + 7 (2 runs each, idle machine), 39-41 s to 28 s. What a file leaves in its worker: the secrets
// test/helpers/cli.ts checks output for only grow (an earlier file's secret is still one; the scan after the run checks
// every run against all of them anyway); memo caches in src/; process.env, which the one test that sets it restores. So
// no file may mock a module, stub a global or fake timers (test/layers.test.ts): the next files would inherit it. A
// test that needs a different effect takes it as a parameter or from its Context (src/context.ts).

export default defineConfig({
  test: {
    isolate: false,
    // More workers than cores: a worker mostly waits (on a loopsign child, the chain, a sandbox's keeper), so with one
    // worker per core the machine idled about 15 % of a run. Four on this 2-core machine kept it busy (99 %) and ran
    // `npm test` in 451 s against 490 s with two (docs/testing.md); the suite is CPU-bound beyond that.
    // LOOPSIGN_TEST_WORKERS=N sets it (vitest's --maxWorkers does not reach the projects, which inherit this value).
    maxWorkers: Number(process.env.LOOPSIGN_TEST_WORKERS) || Math.max(4, availableParallelism()),
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [CLI, E2E],
          globalSetup: [TMP, SECRETS],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'cli',
          include: [CLI],
          globalSetup: [TMP, BUILD, SECRETS],
          testTimeout: HANG,
          hookTimeout: HANG,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: [E2E],
          globalSetup: [TMP, BUILD, SANDBOXES, SECRETS],
          testTimeout: HANG,
          hookTimeout: HANG,
        },
      },
    ],
  },
});
