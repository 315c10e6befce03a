import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readQuery } from "../../shared/analytics/queries";

// The day's query is one statement kept as a folder of fragments, a step a file
// (`shared/analytics/sql/day-activity/`): the engines must get the statement alone, its steps in
// order, and none of the paragraphs that head each fragment for its reader.
const DIR = new URL("../../shared/analytics/sql/day-activity/", import.meta.url);

/** Each fragment's header paragraph (its opening `--` lines), by file name. */
const headers = () =>
  readdirSync(DIR)
    .sort()
    .map((file) => [file, readFileSync(new URL(file, DIR), "utf8").split("\n\n")[0] ?? ""] as const);

describe("the day's query, composed from its fragments", () => {
  it("sends no fragment's header to the engines: the text opens with the query's own description", () => {
    // Act
    const text = readQuery("day-activity");
    // Assess
    expect(text.startsWith("-- The activity of every app on one UTC day")).toBe(true);
    for (const [file, header] of headers()) {
      expect(header.startsWith("-- "), file).toBe(true);
      for (const line of header.split("\n")) expect(text.includes(line), `${file}: ${line}`).toBe(false);
    }
    // The statement has no blank line: the one after each header is left out with it.
    expect(text).not.toMatch(/\n\n/);
  });

  it("joins the steps in the order of the files' names: the chain of CTEs, then the rows", () => {
    // Act
    const text = readQuery("day-activity");
    // Assess: each CTE defined once, after the one it reads.
    const chain = ["archived", "lines", "copies", "facts", "transitions", "changes", "levels", "sides"]
      .concat(["reported", "reports", "stints", "latencies", "ranked_latencies", "grouped", "ranked"])
      .map((name) => text.indexOf(`${name} AS (\n`));
    expect(chain.every((at) => at >= 0)).toBe(true);
    expect(chain).toEqual([...chain].sort((a, b) => a - b));
    expect(text.startsWith("WITH archived AS (", text.indexOf("WITH "))).toBe(true);
    expect(text.endsWith("ORDER BY app, grouping_set, position\n")).toBe(true);
  });
});
