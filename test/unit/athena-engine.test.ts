import {
  type AthenaClient,
  GetQueryExecutionCommand,
  GetQueryResultsCommand,
  StartQueryExecutionCommand,
  StopQueryExecutionCommand,
} from "@aws-sdk/client-athena";
import { describe, expect, it } from "vitest";
import { athenaEngine } from "../../shared/analytics/engines/athena-sql-engine";
import { dayActivity } from "../../shared/analytics/rollup";
import { SqlQueryError } from "../../shared/platform/errors";
import { trinoSyntaxErrors } from "../../tools/analytics/trino-statement";

/**
 * There is no Athena emulator (neither fauxqs nor DynamoDB Local has one, and AWS publishes
 * none), so the adapter runs against a stub of the SDK client's `send` that answers as Athena's
 * API does, states and result pages included. The SQL itself runs on DuckDB in the other tests;
 * here every text sent is checked against Trino's grammar (Athena engine 3), so that a
 * DuckDB-only form in the shared SQL fails a test rather than a deployed rollup.
 */
function stubClient(states: Array<Record<string, unknown>>, pages: Array<Record<string, unknown>> = []) {
  const sent: Array<{ name: string; input: Record<string, unknown> }> = [];
  let poll = 0;
  let page = 0;
  const client = {
    async send(command: { input: Record<string, unknown> }) {
      sent.push({ name: command.constructor.name, input: command.input });
      if (command instanceof StartQueryExecutionCommand) {
        expect(trinoSyntaxErrors(String(command.input.QueryString))).toEqual([]);
        return { QueryExecutionId: "q-1" };
      }
      if (command instanceof GetQueryExecutionCommand)
        return { QueryExecution: states[Math.min(poll++, states.length - 1)] };
      if (command instanceof GetQueryResultsCommand) return pages[page++] ?? {};
      if (command instanceof StopQueryExecutionCommand) return {};
      throw new Error(`unexpected ${command.constructor.name}`);
    },
  };
  return { client: client as unknown as AthenaClient, sent };
}

const running = { Status: { State: "RUNNING" } };
const cell = (v?: string) => (v === undefined ? {} : { VarCharValue: v });

describe("the Athena engine (against a stub client: no Athena emulator exists)", () => {
  it("stops a query still running at the deadline, and starts none past it", async () => {
    // Prepare: a query that never ends; a clock that each poll's wait moves on (a macrotask, so
    // that a loop without a deadline still lets the test's timeout fire).
    const { client, sent } = stubClient([running]);
    let clock = 0;
    const engine = athenaEngine({
      client,
      workGroup: "wg",
      database: "db",
      pollMs: 500,
      deadline: 2_000,
      now: () => clock,
      sleep: async (ms) => {
        await new Promise((resolve) => setImmediate(resolve));
        clock += ms;
      },
    });
    // Act
    const stopped = engine.query("SELECT 1");
    // Assess: stopped at the first poll at or past the deadline, and said so.
    await expect(stopped).rejects.toThrow(SqlQueryError);
    await expect(stopped).rejects.toThrow(/stopped at the deadline \(still RUNNING\)/);
    expect(sent.at(-1)).toEqual({ name: "StopQueryExecutionCommand", input: { QueryExecutionId: "q-1" } });
    expect(sent.filter((c) => c.name === "GetQueryExecutionCommand")).toHaveLength(5);
    const before = sent.length;
    await expect(engine.query("SELECT 1")).rejects.toThrow(/no time left before the deadline/);
    expect(sent).toHaveLength(before);
  });

  it("binds the parameters as SQL literals, waits for the query, and reads every page of results with types", async () => {
    // Prepare
    const { client, sent } = stubClient(
      [
        running,
        running,
        { Status: { State: "SUCCEEDED" }, StatementType: "DML", Statistics: { DataScannedInBytes: 12_345 } },
      ],
      [
        {
          ResultSet: {
            ResultSetMetadata: {
              ColumnInfo: [
                { Name: "trigger", Type: "varchar" },
                { Name: "n", Type: "bigint" },
                { Name: "s", Type: "double" },
              ],
            },
            Rows: [
              { Data: [cell("trigger"), cell("n"), cell("s")] },
              { Data: [cell("message_sent"), cell("3"), cell("1.5")] },
            ],
          },
          NextToken: "t2",
        },
        { ResultSet: { Rows: [{ Data: [cell("call_ended"), cell("1"), cell()] }] } },
      ],
    );
    const waits: number[] = [];
    const engine = athenaEngine({
      client,
      workGroup: "wg",
      database: "db",
      sleep: async (ms) => {
        waits.push(ms);
      },
    });

    // Act
    const result = await engine.query(
      "SELECT trigger, n, s FROM archive_events WHERE app = :app AND n > :n",
      {
        app: "it's",
        n: 2,
      },
    );

    // Assess
    expect(sent[0]).toEqual({
      name: "StartQueryExecutionCommand",
      input: {
        QueryString: "SELECT trigger, n, s FROM archive_events WHERE app = ? AND n > ?",
        WorkGroup: "wg",
        QueryExecutionContext: { Database: "db" },
        ExecutionParameters: ["'it''s'", "2"],
      },
    });
    expect(waits).toHaveLength(2);
    expect(result).toEqual({
      columns: ["trigger", "n", "s"],
      rows: [
        { trigger: "message_sent", n: 3, s: 1.5 },
        { trigger: "call_ended", n: 1, s: null },
      ],
      bytesScanned: 12_345,
    });
    expect(sent.filter((s) => s.name === "GetQueryResultsCommand").map((s) => s.input.NextToken)).toEqual([
      undefined,
      "t2",
    ]);
  });

  it("keeps the first row of a utility statement (SHOW, DESCRIBE): only a DML result starts with column names", async () => {
    // Prepare
    const { client } = stubClient(
      [{ Status: { State: "SUCCEEDED" }, StatementType: "UTILITY", Statistics: { DataScannedInBytes: 0 } }],
      [
        {
          ResultSet: {
            ResultSetMetadata: { ColumnInfo: [{ Name: "tab_name", Type: "string" }] },
            Rows: [{ Data: [cell("archive_edges")] }, { Data: [cell("archive_events")] }],
          },
        },
      ],
    );
    const engine = athenaEngine({ client, workGroup: "wg", database: "db", sleep: async () => undefined });

    // Act
    const result = await engine.query("SHOW TABLES");

    // Assess
    expect(result.rows).toEqual([{ tab_name: "archive_edges" }, { tab_name: "archive_events" }]);
  });

  it("sends the rollup's day query as valid Trino, with its parameters as literals", async () => {
    const { client, sent } = stubClient([{ Status: { State: "SUCCEEDED" }, StatementType: "DML" }], [{}]);
    const engine = athenaEngine({ client, workGroup: "wg", database: "db", sleep: async () => undefined });

    await dayActivity(engine, "app 1", "2026-01-02");

    const start = sent.find((s) => s.name === "StartQueryExecutionCommand")?.input;
    expect(start?.QueryString).toMatch(/^-- The activity of every app on one UTC day/);
    expect(start?.ExecutionParameters).toContain("'2026-01-02'");
  });

  it("turns a failed query into one line with Athena's reason, not retryable when the query is at fault", async () => {
    const { client } = stubClient([
      running,
      {
        Status: {
          State: "FAILED",
          StateChangeReason: "SYNTAX_ERROR: line 1:8: Column 'nope' cannot be resolved\nmore detail",
          AthenaError: { ErrorCategory: 2 },
        },
      },
    ]);
    const engine = athenaEngine({ client, workGroup: "wg", database: "db", sleep: async () => undefined });
    const error = await engine.query("SELECT nope FROM archive_events").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SqlQueryError);
    expect(error).toMatchObject({
      message: "Athena query failed: SYNTAX_ERROR: line 1:8: Column 'nope' cannot be resolved",
      retryable: false,
      state: "FAILED",
    });
  });

  it("reports a cancelled query (the workgroup's bytes-scanned cutoff) as such", async () => {
    const { client } = stubClient([
      {
        Status: {
          State: "CANCELLED",
          StateChangeReason: "Query cancelled: bytes scanned limit was exceeded",
        },
      },
    ]);
    const engine = athenaEngine({ client, workGroup: "wg", database: "db", sleep: async () => undefined });
    await expect(engine.query("SELECT * FROM archive_events")).rejects.toMatchObject({
      name: "SqlQueryError",
      state: "CANCELLED",
      message: "Athena query cancelled: Query cancelled: bytes scanned limit was exceeded",
    });
  });
});
