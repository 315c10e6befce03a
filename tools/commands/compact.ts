/** `npx webhook compact --from YYYY-MM-DD --to YYYY-MM-DD [--json]`: closed receipt days of the local archive to Parquet. */
import { Command } from "commander";
import { duckDbCompactor } from "../../shared/analytics/engines/duckdb-compactor";
import { daysInRange } from "../../shared/analytics/rollup";
import { utcDay } from "../../shared/contracts/bucket-layout";
import { tableLines } from "../cli/format";
import { runProgram, UserFacingError, utcDayOption, withTarget } from "../cli/program";
import { resolveTarget } from "../target";

interface CompactCliOptions {
  from: string;
  to: string;
  json?: boolean;
  stack?: string;
  stateDir?: string;
}

async function run(o: CompactCliOptions): Promise<void> {
  if (o.from > o.to) throw new UserFacingError(`--from ${o.from} is after --to ${o.to}`);
  if (o.to >= utcDay(Date.now()))
    throw new UserFacingError("only closed days: --to must be before today (UTC)");
  const target = await resolveTarget({ stack: o.stack, stateDir: o.stateDir });
  try {
    if (target.kind !== "local" || !target.bucket)
      throw new UserFacingError(
        "this command compacts the local archive (DuckDB); deployed, the rollup's schedule compacts each closed day with Athena (CTAS) once it is final: see docs/analytics.md",
      );
    const compactor = duckDbCompactor({ s3: target.s3, bucket: target.bucket });
    const manifests = [];
    for (const day of daysInRange(o.from, o.to)) manifests.push(await compactor.compactDay(day));
    if (o.json) console.log(JSON.stringify(manifests, null, 2));
    else
      for (const line of tableLines(
        manifests.map((m) => ({
          day: m.day,
          objects: m.sources.length,
          rows: m.rows,
          parquetBytes: m.bytes,
        })),
      ))
        console.log(line);
  } finally {
    target.destroy();
  }
}

const program = withTarget(
  new Command("compact")
    .description(
      "Rewrite closed receipt days of the raw archive as Parquet sorted by app (the NDJSON stays; readers take the Parquet and any object archived after it)",
    )
    .requiredOption("--from <date>", "first UTC day, YYYY-MM-DD (or yesterday)", utcDayOption())
    .requiredOption("--to <date>", "last UTC day, YYYY-MM-DD (or yesterday)", utcDayOption())
    .option("--json", "the manifests as JSON on stdout"),
).action((o: CompactCliOptions) => run(o));

process.exitCode = await runProgram(program, process.argv.slice(2));
