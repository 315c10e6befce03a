/** `npx webhook sql "SELECT …" [--app <appId>] [--from D] [--to D] [--json | --csv] [--stack <name>]`. */
import { Command } from "commander";
import { namesDaySets } from "../../shared/analytics/dialect";
import type { SqlResult } from "../../shared/analytics/engines/sql-engine";
import { SqlQueryError } from "../../shared/platform/errors";
import { sqlEngineFor } from "../analytics/engines";
import { explainSqlError, readOnlyRefusal } from "../analytics/sql-errors";
import { sqlOutputLines } from "../analytics/sql-output";
import { runProgram, UsageError, utcDayOption, withTarget } from "../cli/program";
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

function print(result: SqlResult, o: SqlCliOptions): void {
  const { stdout, stderr } = sqlOutputLines(result, o);
  for (const line of stdout) console.log(line);
  for (const line of stderr) process.stderr.write(`${line}\n`);
}

/**
 * Runs one read-only statement. Locally DuckDB's own parser and a locked session refuse anything
 * else (`duckDbEngine`); for Athena, Trino's grammar does here (`athenaStatementRefusal`), and the
 * caller's IAM policy and the workgroup are the lock (README, "Activity analytics").
 */
async function run(statement: string, o: SqlCliOptions): Promise<void> {
  if (o.from && o.to && o.from > o.to) throw new UsageError(`--from ${o.from} is after --to ${o.to}`);
  // A write is refused in this project's words before anything is read (the engines refuse it too).
  const write = readOnlyRefusal(statement);
  if (write) {
    fail(write);
    return;
  }
  const target = await resolveTarget({ stack: o.stack, stateDir: o.stateDir });
  try {
    // Trino's grammar is loaded only for Athena: the parser takes a second or two to load.
    const refusal =
      target.kind === "local"
        ? undefined
        : (await import("../analytics/trino-statement")).athenaStatementRefusal(statement);
    if (refusal) {
      fail(refusal);
      return;
    }
    const days = { from: o.from, to: o.to };
    // Edge objects are copied for DuckDB only when the statement reads them.
    const edges = /\barchive_edges\b/i.test(statement) ? { edges: days } : {};
    // So are the day sets (users over time, conversations, memberships), for the same days.
    const sets = namesDaySets(statement) ? { sets: days } : {};
    const scope = { ...(o.app ? { app: o.app } : {}), ...days, ...edges, ...sets };
    print(await sqlEngineFor(target).query(statement, {}, scope), o);
  } catch (error) {
    if (error instanceof SqlQueryError) fail(explainSqlError(error.message, statement));
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
    .option(
      "--from <date>",
      "locally: first receipt day read, YYYY-MM-DD (or today, yesterday)",
      utcDayOption(),
    )
    .option("--to <date>", "locally: last receipt day read, YYYY-MM-DD (or today, yesterday)", utcDayOption())
    .option("--json", "the rows as one JSON array on stdout")
    .option("--csv", "the rows as CSV on stdout"),
).action((statement: string, o: SqlCliOptions) => run(statement, o));

const code = await runProgram(program, process.argv.slice(2));
process.exitCode = sqlExit ?? code;
