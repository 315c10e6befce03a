/** `npx webhook rollup --app <appId> --from YYYY-MM-DD --to YYYY-MM-DD [--neighbours] [--stack <name>] [--json]`. */
import { Command } from "commander";
import { daysInRange, rollupDay } from "../../shared/analytics/rollup";
import { activityStoreFor, sqlEngineFor } from "../analytics/engines";
import { tableLines } from "../cli/format";
import { integer, runProgram, UsageError, UserFacingError, utcDayOption, withTarget } from "../cli/program";
import { resolveTarget } from "../target";

interface RollupCliOptions {
  app: string;
  from: string;
  to: string;
  graceMinutes: number;
  neighbours?: boolean;
  json?: boolean;
  stack?: string;
  stateDir?: string;
}

async function run(o: RollupCliOptions): Promise<void> {
  if (o.from > o.to) throw new UsageError(`--from ${o.from} is after --to ${o.to}`);
  const days = daysInRange(o.from, o.to);
  if (days.length > 366) throw new UserFacingError("at most 366 days at a time");
  const target = await resolveTarget({ stack: o.stack, stateDir: o.stateDir });
  try {
    const deps = {
      engine: sqlEngineFor(target),
      store: activityStoreFor(target),
      now: Date.now,
      graceMs: o.graceMinutes * 60_000,
    };
    const results = [];
    for (const day of days) results.push(await rollupDay(o.app, day, deps, { neighbours: o.neighbours }));
    if (o.json) console.log(JSON.stringify(results, null, 2));
    else
      for (const line of tableLines(
        results.map((r) => ({
          day: r.day,
          outcome: r.outcome,
          final: r.final,
          computedAt: new Date(r.computedAt).toISOString(),
          bytesScanned: r.bytesScanned,
        })),
      ))
        console.log(line);
  } finally {
    target.destroy();
  }
}

const program = withTarget(
  new Command("rollup")
    .description(
      "Recompute an app's activity figures from the raw archive (DuckDB locally, Athena with --stack)",
    )
    .requiredOption("--app <appId>", "the app")
    .requiredOption("--from <date>", "first UTC day, YYYY-MM-DD (or today, yesterday)", utcDayOption())
    .requiredOption("--to <date>", "last UTC day, YYYY-MM-DD (or today, yesterday)", utcDayOption())
    .option("--grace-minutes <minutes>", "a day is final this long after its end", integer(0, 1440), 120)
    .option(
      "--neighbours",
      "also read the receipt days before and after each day: for days archived before edge objects (see docs/analytics.md)",
    )
    .option("--json", "one JSON value on stdout"),
).action((o: RollupCliOptions) => run(o));

process.exitCode = await runProgram(program, process.argv.slice(2));
