import { defineConfig } from "vitest/config";
import { SlowestFirstSequencer } from "./test/support/slowest-files";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests share two emulators; two workers match the machine's two cores.
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    // The slowest files first, and named at the end of a run (issue #42, item 11).
    sequence: { sequencer: SlowestFirstSequencer },
    reporters: ["default", "./test/support/slowest-files.ts"],
  },
});
