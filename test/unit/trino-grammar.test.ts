import { describe, expect, it } from "vitest";
import { bindNamed } from "../../shared/analytics/dialect";
import { QUERY_NAMES, readQuery } from "../../shared/analytics/queries";
import { athenaStatementRefusal, trinoSyntaxErrors } from "../../tools/analytics/trino-statement";

/** Values for every parameter a query file may use (the grammar check needs only their places). */
const ANY_PARAMS = {
  app: "a",
  first_date: "2026-01-01",
  last_date: "2026-01-02",
  day: "2026-01-01",
  day_start: 0,
  day_end: 86_400_000,
  top: 25,
  users: 1,
  from: "2026-01-01",
  to: "2026-01-31",
};

describe("Trino's grammar (Athena engine 3) over the SQL sent to Athena: no emulator exists, so the grammar is the check", () => {
  it.each(QUERY_NAMES)("the query file %s, as the Athena adapter sends it, is valid Trino", (name) => {
    expect(trinoSyntaxErrors(bindNamed(readQuery(name), ANY_PARAMS).text)).toEqual([]);
  });

  it.each(QUERY_NAMES)(
    "the query file %s casts an integer read from a body through DOUBLE, as both engines accept it",
    (name) => {
      // Trino's CAST('1696934553.0' AS BIGINT) fails where DuckDB's succeeds; through DOUBLE both agree.
      const direct = readQuery(name).match(/CAST\(json_extract_scalar\([^)]*\) AS (BIGINT|INTEGER)\)/g);
      expect(direct).toBeNull();
    },
  );

  it.each([
    ["a :: cast", "SELECT received_at::BIGINT FROM archive_events"],
    ["GROUP BY ALL", "SELECT trigger, count(*) FROM archive_events GROUP BY ALL"],
    ["QUALIFY", "SELECT * FROM archive_events QUALIFY row_number() OVER (PARTITION BY natural_key) = 1"],
    ["a $$ string", "SELECT $$x$$"],
  ])("catches DuckDB-only syntax: %s", (_, sql) => {
    expect(trinoSyntaxErrors(sql).length).toBeGreaterThan(0);
  });

  it.each([
    "SELECT trigger, count(*) AS n FROM archive_events WHERE app = 'a' GROUP BY trigger",
    "WITH x AS (SELECT 1 AS a) SELECT a FROM x;",
    "VALUES 1",
    "SHOW TABLES",
    "DESCRIBE archive_events",
  ])("lets an ad-hoc read through: %s", (sql) => {
    expect(athenaStatementRefusal(sql)).toBeUndefined();
  });

  it.each([
    ["a second statement after '--' in a string", "SELECT '--' AS a; DROP TABLE archive_events"],
    ["a second statement after '/*' in a string", "SELECT '/*' AS a; DROP TABLE archive_events --*/"],
    ["COPY (DuckDB's)", "COPY (SELECT 42 AS x) TO '/tmp/x.csv'"],
    ["a $$ string hiding a second statement", "SELECT $$'$$ AS a; DROP TABLE archive_events"],
    ["DDL", "DROP TABLE archive_events"],
    ["Hive DDL", "MSCK REPAIR TABLE archive_events"],
    ["CTAS", "CREATE TABLE x AS SELECT * FROM archive_events"],
    ["INSERT", "INSERT INTO archive_events SELECT * FROM archive_edges"],
    ["UNLOAD", "UNLOAD (SELECT * FROM archive_events) TO 's3://bucket/x/' WITH (format = 'JSON')"],
    ["EXPLAIN ANALYZE", "EXPLAIN ANALYZE SELECT 1"],
    ["PREPARE", "PREPARE p FROM SELECT 1"],
    ["SET SESSION", "SET SESSION query_max_run_time = '1h'"],
  ])("refuses an ad-hoc %s", (_, sql) => {
    expect(athenaStatementRefusal(sql)).toEqual(expect.any(String));
  });
});
