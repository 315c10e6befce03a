import { describe, expect, it } from "vitest";
import { slowestFilesLines } from "../support/slowest-files";

// Issue #42, item 11: the end of a run names its slowest files, so that the next regression of
// `npm test`'s time is seen in the run that causes it.

describe("the slowest files at the end of a run", () => {
  const files = Array.from({ length: 12 }, (_, i) => ({
    file: `test/unit/f${i}.test.ts`,
    ms: (i + 1) * 1000,
  }));

  it("lists the ten slowest, slowest first, with seconds and share of the test time, then one plain count line", () => {
    const lines = slowestFilesLines(files, { passed: 30, failed: 1, skipped: 2 }, 40_000);
    expect(lines[0]).toBe("Slowest test files (10 of 12; 78 s of test time in 40 s):");
    expect(lines.slice(1, 11).map((l) => l.trim().split(/\s+/).at(-1))).toEqual(
      files
        .map((f) => f.file)
        .reverse()
        .slice(0, 10),
    );
    expect(lines[1]).toBe("    12.0 s   15%  test/unit/f11.test.ts");
    expect(lines.at(-1)).toBe("30 passed, 1 failed, 2 skipped");
    expect(lines).toHaveLength(12);
  });

  it("a run of a few files (a developer's loop) gets the count line only", () => {
    expect(slowestFilesLines(files.slice(0, 4), { passed: 4, failed: 0, skipped: 0 }, 5_000)).toEqual([
      "4 passed, 0 failed, 0 skipped",
    ]);
  });
});
