/** `npx webhook sql "SELECT …" [--app <appId>] [--from D] [--to D] [--json | --csv] [--stack <name>]`. */
import { Command } from "commander";
import { isReadOnlyStatement, type SqlValue } from "../../shared/analytics/dialect";
import type { SqlResult } from "../../shared/analytics/engines/sql-engine";
import { SqlQueryError } from "../../shared/platform/errors";
import { sqlEngineFor } from "../analytics/engines";
import { isoDate, runProgram, withTarget } from "../cli/program";
import { resolveTarget } from "../target";

interface SqlCliOptions {
  app?: string;
  from?: string;
  to?: string;
  json?: boolean;
  csv?: boolean;
  stack?: string;
  stateDir?: string;
}

/** An exit code an action sets for errors in the user's SQL (2, like a usage error). */
let sqlExit: number | undefined;

function fail(message: string): void {
  process.stderr.write(`error: ${message}\n`);
  sqlExit = 2;
}

const csvCell = (v: SqlValue | null) => {
  const text = v === null ? "" : String(v);
  return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};

function print(result: SqlResult, o: SqlCliOptions): void {
  if (o.json) {
    console.log(JSON.stringify(result.rows, null, 2));
    return;
  }
  if (o.csv) {
    console.log(result.columns.map((c) => csvCell(c)).join(","));
    for (const row of result.rows) console.log(result.columns.map((c) => csvCell(row[c] ?? null)).join(","));
    return;
  }
  const cell = (v: SqlValue | null | undefined) => {
    const text = v === null || v === undefined ? "" : String(v);
    return text.length > 80 ? `${text.slice(0, 77)}...` : text;
  };
  const widths = result.columns.map((c) => Math.max(c.length, ...result.rows.map((r) => cell(r[c]).length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  console.log(line(result.columns));
  console.log(line(widths.map((w) => "-".repeat(w))));
  for (const row of result.rows) console.log(line(result.columns.map((c) => cell(row[c]))));
  process.stderr.write(`(${result.rows.length} rows, ${result.bytesScanned} bytes scanned)\n`);
}

async function run(statement: string, o: SqlCliOptions): Promise<void> {
  if (!isReadOnlyStatement(statement)) {
    fail("only one read-only statement is allowed (SELECT, WITH, VALUES, SHOW, DESCRIBE, EXPLAIN)");
    return;
  }
  const target = await resolveTarget({ stack: o.stack, stateDir: o.stateDir });
  try {
    const days = { from: o.from, to: o.to };
    // Edge objects are copied for DuckDB only when the statement reads them.
    const edges = /\barchive_edges\b/i.test(statement) ? { edges: days } : {};
    const scope = { ...(o.app ? { app: o.app } : {}), ...days, ...edges };
    print(await sqlEngineFor(target).query(statement, {}, scope), o);
  } catch (error) {
    if (error instanceof SqlQueryError) fail(error.message);
    else throw error;
  } finally {
    target.destroy();
  }
}

const program = withTarget(
  new Command("sql")
    .description(
      "Read-only SQL over the raw archive as the view archive_events (app, date, event_id, received_at, event_time, rank, trigger, natural_key, body; each line once per receipt) and archive_edges (copies of some of its lines, for the rollup): DuckDB locally, Athena with --stack",
    )
    .argument("<statement>", "one SELECT (Athena's dialect; filter on app = '…' with --stack)")
    .option(
      "--app <appId>",
      "locally: the views hold only this app's lines (with --stack, filter on app = '…')",
    )
    .option("--from <date>", "locally: first receipt day read, YYYY-MM-DD", isoDate)
    .option("--to <date>", "locally: last receipt day read, YYYY-MM-DD", isoDate)
    .option("--json", "the rows as one JSON array on stdout")
    .option("--csv", "the rows as CSV on stdout"),
).action((statement: string, o: SqlCliOptions) => run(statement, o));

const code = await runProgram(program, process.argv.slice(2));
process.exitCode = sqlExit ?? code;
