/** `npx webhook rollup [--app <appId>] --from YYYY-MM-DD --to YYYY-MM-DD [--neighbours] [--stack <name>] [--json]`. */
import { Command } from "commander";
import { type DayRollup, daysInRange, rollupDay, rollupDayAllApps } from "../../shared/analytics/rollup";
import { activityStoreFor, sqlEngineFor, userSetsFor } from "../analytics/engines";
import { tableLines } from "../cli/format";
import { integer, runProgram, UsageError, UserFacingError, utcDayOption, withTarget } from "../cli/program";
import { assertAppDelivered } from "../query/known-apps";
import { resolveTarget } from "../target";

interface RollupCliOptions {
  app?: string;
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
    // An app that never delivered: say so (exit 3) rather than write zero days for it.
    if (o.app) await assertAppDelivered(target, o.app, o.stateDir);
    const deps = {
      engine: sqlEngineFor(target),
      store: activityStoreFor(target),
      now: Date.now,
      graceMs: o.graceMinutes * 60_000,
      // A final pass over every app writes the day's user sets (users over time).
      userSets: target.bucket ? userSetsFor(target) : undefined,
    };
    // One query a day: for one app, or for every app of the day at once.
    const results: DayRollup[] = [];
    const failures: Array<{ appId: string; day: string; error: string }> = [];
    let bytesScanned = 0;
    for (const day of days) {
      if (o.app) {
        const r = await rollupDay(o.app, day, deps, { neighbours: o.neighbours });
        results.push(r);
        bytesScanned += r.bytesScanned;
        continue;
      }
      const pass = await rollupDayAllApps(day, deps, { neighbours: o.neighbours });
      results.push(...pass.rollups);
      failures.push(...pass.failures.map((f) => ({ ...f, error: String(f.error) })));
      bytesScanned += pass.bytesScanned;
    }
    const queries = days.length;
    if (o.json) console.log(JSON.stringify({ queries, bytesScanned, rollups: results, failures }, null, 2));
    else {
      for (const line of tableLines(
        results.map((r) => ({
          app: r.appId,
          day: r.day,
          outcome: r.outcome,
          final: r.final,
          computedAt: new Date(r.computedAt).toISOString(),
        })),
      ))
        console.log(line);
      console.log(
        `${queries} engine quer${queries === 1 ? "y" : "ies"}, ${bytesScanned} bytes of archive read`,
      );
      for (const f of failures) console.error(`failed: ${f.appId} ${f.day}: ${f.error}`);
    }
    if (failures.length) process.exitCode = 1;
  } finally {
    target.destroy();
  }
}

const program = withTarget(
  new Command("rollup")
    .description(
      "Recompute activity figures from the raw archive, every app of each day in one query (DuckDB locally, Athena with --stack)",
    )
    .option("--app <appId>", "only this app (default: every app with a line on the day)")
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
