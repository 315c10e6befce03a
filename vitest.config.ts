import { defineConfig } from "vitest/config";
import { SOURCE_CONDITION } from "./infra/conditions";
import { SlowestFirstSequencer } from "./test/support/slowest-files";

export default defineConfig({
  // The stream package (packages/stream) is imported from its TypeScript sources, as the bundles,
  // the type check and tsx import it (infra/conditions.ts).
  // The rest is Vite's server default but "module" (which picks the AWS SDK's dist-es, ESM for
  // bundlers only, that Node cannot load).
  ssr: { resolve: { conditions: [SOURCE_CONDITION, "node", "development|production"] } },
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    // A green run's log is its summary and the slowest files: what a test or the code under test
    // writes (the functions' log and metric lines among it, test/support/worker-output.ts) is
    // printed only for a test that failed, under its name (issue #56).
    setupFiles: ["test/support/worker-output.ts"],
    silent: "passed-only",
    // A passing test is named in the log only past 30 s (the default, 300 ms, named most of the
    // e2e and integration tests: hundreds of lines); every file still gets its line.
    slowTestThreshold: 30_000,
    // Deadlines, not expected times: a test waits on conditions, which on a machine at load 15
    // (two cores, several runs at once) take several times what they take alone; at 60 s, ten
    // tests of four e2e files timed out there (issue #56). A green run is not slower for it.
    testTimeout: 240_000,
    hookTimeout: 300_000,
    // Three workers on the machine's two cores: a run keeps them busy only two fifths of its time
    // (530 CPU-seconds in a 700 s run on two workers), the rest waits on stacks starting, batching
    // windows, retries and commands in their own processes; a third worker fills those waits
    // (700 s -> 510 s, issue #42 item 11). The integration tests share the two emulators.
    pool: "forks",
    poolOptions: { forks: { maxForks: 3, minForks: 1 } },
    // The slowest files first, and named at the end of a run (issue #42, item 11).
    sequence: { sequencer: SlowestFirstSequencer },
    reporters: ["default", "./test/support/slowest-files.ts"],
  },
});
