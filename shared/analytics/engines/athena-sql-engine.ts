import {
  type AthenaClient,
  GetQueryExecutionCommand,
  GetQueryResultsCommand,
  type GetQueryResultsCommandOutput,
  StartQueryExecutionCommand,
  StopQueryExecutionCommand,
} from "@aws-sdk/client-athena";
import { SqlQueryError } from "../../platform/errors";
import { athenaLiteral, bindNamed, type SqlValue } from "../dialect";
import type { SqlEngine } from "./sql-engine";

export interface AthenaEngineOptions {
  client: AthenaClient;
  /** The workgroup: its result location (encrypted) and bytes-scanned cutoff apply. */
  workGroup: string;
  /** The Glue database holding the `archive_events` table. */
  database: string;
  /** Waits between status polls (injected: tests pass one that does not wait). */
  sleep?: (ms: number) => Promise<void>;
  /** Poll interval, ms. @default 500 */
  pollMs?: number;
  /**
   * Epoch ms after which no query starts and a running one is stopped (a Lambda's remaining time
   * less a margin, so that the failure is counted before the timeout kills the invocation).
   * @default none
   */
  deadline?: number;
  /** The clock the deadline is read against. @default Date.now */
  now?: () => number;
}

const NUMERIC = new Set(["tinyint", "smallint", "integer", "bigint", "double", "float", "real", "decimal"]);

/**
 * Athena as the `SqlEngine` of a deployed stack: the same query text, parameters bound as
 * `ExecutionParameters` (SQL literals), run in the stack's workgroup, polled until it ends, the
 * results read page by page. A failed or cancelled query (a syntax error, the bytes-scanned
 * cutoff) is a `SqlQueryError` with Athena's reason; `bytesScanned` is Athena's
 * `DataScannedInBytes`, what it bills.
 *
 * @example await athenaEngine({ client: new AthenaClient({}), workGroup, database }).query(sql, params)
 */
export function athenaEngine(options: AthenaEngineOptions): SqlEngine {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const now = options.now ?? Date.now;
  const pastDeadline = () => options.deadline !== undefined && now() >= options.deadline;
  return {
    name: "athena",
    async query(sql, params = {}) {
      if (pastDeadline())
        throw new SqlQueryError("no time left before the deadline to start a query", false, "CANCELLED");
      const bound = bindNamed(sql, params);
      const started = await options.client.send(
        new StartQueryExecutionCommand({
          QueryString: bound.text,
          WorkGroup: options.workGroup,
          QueryExecutionContext: { Database: options.database },
          ...(bound.values.length ? { ExecutionParameters: bound.values.map(athenaLiteral) } : {}),
        }),
      );
      const id = started.QueryExecutionId;
      if (!id) throw new SqlQueryError("Athena started no query", true);
      for (;;) {
        const { QueryExecution: execution } = await options.client.send(
          new GetQueryExecutionCommand({ QueryExecutionId: id }),
        );
        const state = execution?.Status?.State;
        if (state === "SUCCEEDED") {
          // A DML statement's (SELECT's) first page starts with a row of column names; a utility
          // statement's (SHOW, DESCRIBE) does not.
          const header = execution?.StatementType === "DML";
          const result = await readResults(options.client, id, header);
          return { ...result, bytesScanned: execution?.Statistics?.DataScannedInBytes ?? 0 };
        }
        if (state === "FAILED" || state === "CANCELLED") {
          const reason = execution?.Status?.StateChangeReason ?? state.toLowerCase();
          const category = execution?.Status?.AthenaError?.ErrorCategory;
          // Category 1 is a system error (worth retrying); 2 the user's query, 3 other.
          throw new SqlQueryError(
            `Athena query ${state.toLowerCase()}: ${reason.split("\n")[0]}`,
            category === 1,
            state,
          );
        }
        if (pastDeadline()) {
          await options.client.send(new StopQueryExecutionCommand({ QueryExecutionId: id }));
          throw new SqlQueryError(
            `Athena query stopped at the deadline (still ${state ?? "queued"})`,
            false,
            "CANCELLED",
          );
        }
        await sleep(options.pollMs ?? 500);
      }
    },
  };
}

async function readResults(client: AthenaClient, id: string, header: boolean) {
  let columns: string[] = [];
  let types: string[] = [];
  const rows: Array<Record<string, SqlValue | null>> = [];
  let token: string | undefined;
  let first = true;
  do {
    const page: GetQueryResultsCommandOutput = await client.send(
      new GetQueryResultsCommand({ QueryExecutionId: id, NextToken: token }),
    );
    if (first) {
      const info = page.ResultSet?.ResultSetMetadata?.ColumnInfo ?? [];
      columns = info.map((c) => c.Name ?? "");
      types = info.map((c) => (c.Type ?? "varchar").toLowerCase());
    }
    const data = page.ResultSet?.Rows ?? [];
    for (const row of first && header ? data.slice(1) : data) {
      const values = row.Data ?? [];
      rows.push(
        Object.fromEntries(
          columns.map((c, i) => {
            const text = values[i]?.VarCharValue;
            if (text === undefined) return [c, null];
            return [c, NUMERIC.has((types[i] ?? "").replace(/\(.*$/, "")) ? Number(text) : text];
          }),
        ),
      );
    }
    first = false;
    token = page.NextToken;
  } while (token);
  return { columns, rows };
}
