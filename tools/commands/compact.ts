/**
 * `npx webhook compact --from YYYY-MM-DD --to YYYY-MM-DD [--json] [--stack <name>]`: closed receipt
 * days of the archive to Parquet (DuckDB locally, Athena CTAS deployed), under the archive lease
 * (held by another rewrite: it says by whom and compacts nothing).
 */
import { Command } from "commander";
import { withArchiveLease } from "../../shared/adapters/archive-lease";
import { daysInRange } from "../../shared/analytics/rollup";
import { utcDay } from "../../shared/contracts/bucket-layout";
import { archiveLeaseFor, compactorFor, sayWhoHoldsTheArchive } from "../analytics/engines";
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
    const compactor = compactorFor(target);
    const manifests = await withArchiveLease(
      archiveLeaseFor(target),
      `compact ${o.from}..${o.to}`,
      Date.now,
      async (renew) => {
        const done = [];
        for (const day of daysInRange(o.from, o.to)) {
          await renew();
          done.push(await compactor.compactDay(day));
        }
        return done;
      },
    ).catch(sayWhoHoldsTheArchive);
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
      "Rewrite closed receipt days of the raw archive as Parquet sorted by app (the NDJSON stays; readers take the Parquet and any object archived after it); DuckDB locally, Athena with --stack (the schedule compacts each final day itself)",
    )
    .requiredOption("--from <date>", "first UTC day, YYYY-MM-DD (or yesterday)", utcDayOption())
    .requiredOption("--to <date>", "last UTC day, YYYY-MM-DD (or yesterday)", utcDayOption())
    .option("--json", "the manifests as JSON on stdout"),
).action((o: CompactCliOptions) => run(o));

process.exitCode = await runProgram(program, process.argv.slice(2));
