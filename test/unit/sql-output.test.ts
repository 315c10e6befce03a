import { describe, expect, it } from "vitest";
import { sqlOutputLines } from "../../tools/analytics/sql-output";

/** The engines give timestamps as they come (DuckDB: a Date), whatever the port's types say. */
const rows = (values: Array<Record<string, unknown>>) => values as never;

describe("sql's output", () => {
  const result = {
    columns: ["day", "events"],
    rows: rows([{ day: new Date("2025-11-13T00:00:00.000Z"), events: 4 }]),
    bytesScanned: 120,
  };

  it("prints timestamps in ISO 8601, as every other command, in the table and in CSV", () => {
    const table = sqlOutputLines(result, {});
    expect(table.stdout.join("\n")).toContain("2025-11-13T00:00:00.000Z");
    expect(table.stdout.join("\n")).not.toContain("GMT");
    expect(sqlOutputLines(result, { csv: true }).stdout).toEqual([
      "day,events",
      "2025-11-13T00:00:00.000Z,4",
    ]);
    expect(JSON.parse(sqlOutputLines(result, { json: true }).stdout.join("\n"))).toEqual([
      { day: "2025-11-13T00:00:00.000Z", events: 4 },
    ]);
  });

  it("counts one row as (1 row), others as rows", () => {
    expect(sqlOutputLines(result, {}).stderr).toEqual(["(1 row, 120 bytes scanned)"]);
    expect(sqlOutputLines({ ...result, rows: [] }, {}).stderr).toEqual(["(0 rows, 120 bytes scanned)"]);
  });
});
