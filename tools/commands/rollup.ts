/** `npx webhook rollup [--app <appId>] --from YYYY-MM-DD --to YYYY-MM-DD [--neighbours] [--stack <name>] [--json]`. */
import { Command } from "commander";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { daysInRange, rollupDays } from "../../shared/analytics/rollup";
import { blobRollupLedger } from "../../shared/analytics/store/rollup-ledger";
import {
  activityStoreFor,
  archiveLeaseFor,
  sayWhoHoldsTheArchive,
  sqlEngineFor,
  userSetsFor,
} from "../analytics/engines";
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
    const store = activityStoreFor(target);
    const deps = {
      engine: sqlEngineFor(target),
      store,
      now: Date.now,
      graceMs: o.graceMinutes * 60_000,
      // A closed day's pass writes its day sets (users over time; one app: its entry merged),
      // under the archive lease that an erasure holds too.
      userSets: target.bucket ? userSetsFor(target) : undefined,
      archiveLock: archiveLeaseFor(target),
      // Over every app, each day's pass is recorded as the schedule's: what the watchdog judges from.
      ledger: target.bucket && !o.app ? blobRollupLedger(s3BlobStore(target.s3, target.bucket)) : undefined,
    };
    // One query a day: for one app, or for every app of the day at once.
    const report = await rollupDays(days, deps, { app: o.app, neighbours: o.neighbours }).catch(
      sayWhoHoldsTheArchive,
    );
    const failures = report.failures.map((f) => ({ ...f, error: String(f.error) }));
    if (o.json) console.log(JSON.stringify({ ...report, failures }, null, 2));
    else {
      for (const line of tableLines(
        report.rollups.map((r) => ({
          app: r.appId,
          day: r.day,
          outcome: r.outcome,
          final: r.final,
          computedAt: new Date(r.computedAt).toISOString(),
          ...(o.app ? { usersOverTime: r.daySets ?? "" } : {}),
        })),
      ))
        console.log(line);
      console.log(
        `${report.queries} engine quer${report.queries === 1 ? "y" : "ies"}, ${report.bytesScanned} bytes of archive read`,
      );
      for (const { day, finalAt } of report.open)
        console.log(
          `${day} is not closed yet: its figures are provisional and its users over time blank until a pass after ${new Date(finalAt).toISOString()} (its end plus --grace-minutes): the schedule's, or this command again`,
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
    .option(
      "--app <appId>",
      "only this app (default: every app with a line on a day of the range, each of its days written, zeros on a day without its line); a closed day's users over time too (its entry merged into the day's sets)",
    )
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
