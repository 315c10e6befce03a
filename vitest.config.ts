import { defineConfig } from "vitest/config";
import { SlowestFirstSequencer } from "./test/support/slowest-files";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
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
