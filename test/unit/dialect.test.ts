import { DuckDBInstance } from "@duckdb/node-api";
import { describe, expect, it } from "vitest";
import { athenaLiteral, bindNamed, DUCKDB_MACROS } from "../../shared/analytics/dialect";
import { readQuery } from "../../shared/analytics/queries";

describe("the dialect layer", () => {
  it("binds named parameters in order, outside strings, quoted names, comments and casts", () => {
    const bound = bindNamed(
      `SELECT ':no', "col:x", a::INTEGER -- :comment\nFROM t WHERE a = :app AND b BETWEEN :from AND :to AND c = :app`,
      { app: "a1", from: "2026-01-01", to: "2026-01-02" },
    );
    expect(bound.text).toBe(
      `SELECT ':no', "col:x", a::INTEGER -- :comment\nFROM t WHERE a = ? AND b BETWEEN ? AND ? AND c = ?`,
    );
    expect(bound.values).toEqual(["a1", "2026-01-01", "2026-01-02", "a1"]);
  });

  it("leaves a :name inside a block comment or a $$ string alone", () => {
    const bound = bindNamed("SELECT /* :a */ $$:b$$, $t$:c$t$ WHERE x = :d", { d: 1 });
    expect(bound).toEqual({ text: "SELECT /* :a */ $$:b$$, $t$:c$t$ WHERE x = ?", values: [1] });
  });

  it("names a parameter the query uses but nobody gave", () => {
    expect(() => bindNamed("SELECT :missing", {})).toThrow(":missing");
  });

  it("binds every parameter of the rollup query", () => {
    const bound = bindNamed(readQuery("day-activity"), {
      app: "a",
      first_date: "d0",
      last_date: "d2",
      day: "d1",
      day_start: 1,
      day_end: 2,
      top: 25,
      users: 0,
    });
    // Every app's lines of the days, then narrowed to :app ('' for every app); a fact's hour; its
    // members, their count and its order key on :users; the facts' day; the sides of the day sets
    // on :users; a stint's day, a stint's hour; the day-set key (4 kinds) on :users; the top lists
    // cut at :top; the day sets shipped on :users.
    expect(bound.values).toEqual([
      "d0",
      "d2",
      "d1",
      "a",
      "a",
      1,
      0,
      0,
      0,
      1,
      2,
      0,
      1,
      2,
      1,
      0,
      0,
      0,
      0,
      25,
      0,
    ]);
  });

  it("writes Athena execution parameters as SQL literals", () => {
    expect(athenaLiteral("it's")).toBe("'it''s'");
    expect(athenaLiteral(1767312000000)).toBe("1767312000000");
    expect(() => athenaLiteral(Number.NaN)).toThrow();
  });

  it("gives DuckDB Athena's JSON functions, with Athena's results", async () => {
    const instance = await DuckDBInstance.create(":memory:");
    const connection = await instance.connect();
    for (const macro of DUCKDB_MACROS) await connection.run(macro);
    const reader = await connection.runAndReadAll(
      `SELECT json_extract_scalar(j, '$.a.b') AS s, json_extract_scalar(j, '$.n') AS n,
              json_extract_scalar(j, '$.missing') AS m, json_size(j, '$.o') AS o, json_size(j, '$.l') AS l
       FROM (VALUES ('{"a":{"b":"x"},"n":12,"o":{"u1":{},"u2":{}},"l":[1,2,3]}')) AS t(j)`,
    );
    expect(reader.getRowObjectsJS()).toEqual([{ s: "x", n: "12", m: null, o: 2n, l: 3n }]);
    connection.closeSync();
    instance.closeSync();
  });
});
