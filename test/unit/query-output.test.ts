import { describe, expect, it } from "vitest";
import {
  fittedTableLines,
  leftOutNote,
  TERMINAL_COLUMNS,
  tableLines,
  tableText,
} from "../../tools/cli/format";
import { recordingRow } from "../../tools/query/commands/recordings";

// What a query table prints for a person (#42, walk-4): within TERMINAL_COLUMNS by default, the
// widest columns left out with a note naming --wide; every column with --wide.

/** A recording archived on the local stack, as `query recordings` reads it: the platform's session id (66 characters), a long key, a longer path. */
const archived = {
  sessionId: "v1.eu.2598234fa1e3b9c.1696934199a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8",
  startTime: 1795656070,
  duration: "62",
  status: "archived",
  size: 1_048_576,
  key: "recordings/sim-s7-a1/2026/11/26/v1.eu.2598234fa1e3b9c.1696934199a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8/1795656070.mp4",
  file: "/home/someone/projects/webhook/.local-stack/s3/buckets/webhook-local-data/objects/recordings/sim-s7-a1/2026/11/26/v1.eu.2598234fa1e3b9c.1696934199a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8/1795656070.mp4",
};
const failed = {
  sessionId: "v1.eu.2598234fa1e3b9c.1696934200f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8",
  startTime: 1795656100,
  duration: "5",
  status: "failed",
  failureReason: "private-address",
};

describe("query recordings' table (#42, walk-4)", () => {
  it("fits 100 columns by default: the session, its status and time; the rest left out, said with --wide and --json", () => {
    // Act
    const lines = tableText([archived, failed].map(recordingRow));

    // Assess
    expect(TERMINAL_COLUMNS).toBe(100);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(TERMINAL_COLUMNS);
    expect(lines[0]?.split(/\s+/)).toEqual(["sessionId", "status", "startTime"]);
    expect(lines[2]?.split(/\s+/)).toEqual([archived.sessionId, "archived", "2026-11-26T01:21:10Z"]);
    expect(lines.at(-1)).toBe(
      "5 columns left out to fit 100 columns: --wide shows them, --json has every value.",
    );
  });

  it("--wide prints every column, the key and the file whole", () => {
    const lines = tableText([archived, failed].map(recordingRow), { wide: true });
    expect(lines[0]?.split(/\s+/)).toEqual([
      "sessionId",
      "status",
      "startTime",
      "duration",
      "size",
      "failureReason",
      "key",
      "file",
    ]);
    expect(lines.join("\n")).toContain(archived.key);
    expect(lines.join("\n")).toContain(archived.file);
    expect(lines.some((l) => l.length > TERMINAL_COLUMNS)).toBe(true);
  });
});

describe("tables that fit (the mechanism query activity uses too)", () => {
  const rows = [{ a: "x".repeat(40), b: "y".repeat(40), c: "z".repeat(40), d: "w" }];

  it("leaves out the columns on the right until the table fits, and counts them", () => {
    const { lines, dropped } = fittedTableLines(rows, ["a", "b", "c", "d"]);
    expect(dropped).toBe(2);
    expect(lines).toEqual(tableLines(rows, ["a", "b"]));
  });

  it("keeps the first two columns however wide, and a table that fits as it is", () => {
    const wide = [{ a: "x".repeat(90), b: "y".repeat(90), c: "z" }];
    expect(fittedTableLines(wide).dropped).toBe(1);
    expect(fittedTableLines(wide).lines[0]?.split(/\s+/)).toEqual(["a", "b"]);
    const narrow = [{ a: 1, b: 2 }];
    expect(tableText(narrow)).toEqual(tableLines(narrow));
  });

  it("says one column, not 1 columns", () => {
    expect(leftOutNote(1)).toBe(
      "1 column left out to fit 100 columns: --wide shows them, --json has every value.",
    );
  });
});
