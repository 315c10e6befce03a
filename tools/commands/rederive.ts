/**
 * `npm run rederive -- [--app <appId>] [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--dry-run] [--json] [--stack <name>]`:
 * derives the event time, natural key and rank of archived lines again, with today's code
 * (`rederiveArchive`), rewriting the objects whose lines changed under the archive lease (held by
 * another rewrite: it says by whom and changes nothing), and compacting again the compacted days
 * it changed. Then recompute those days.
 */
import { Command } from "commander";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { archiveRewriterFor, sayWhoHoldsTheArchive } from "../analytics/engines";
import { keyValueLines } from "../cli/format";
import { runProgram, UsageError, UserFacingError, utcDayOption, withTarget } from "../cli/program";
import { rederiveArchive } from "../ops/archive-repair";
import { resolveTarget } from "../target";

interface RederiveCliOptions {
  app?: string;
  from?: string;
  to?: string;
  dryRun?: boolean;
  json?: boolean;
  stack?: string;
  stateDir?: string;
}

async function run(o: RederiveCliOptions): Promise<void> {
  if (o.from && o.to && o.from > o.to)
    throw new UsageError(`--from ${o.from} is after --to ${o.to}: give the earlier day first`);
  const target = await resolveTarget({ stack: o.stack, stateDir: o.stateDir });
  try {
    if (!target.bucket) throw new UserFacingError("the target has no data bucket");
    const report = await rederiveArchive(
      target.s3,
      s3BlobStore(target.s3, target.bucket),
      { appId: o.app, from: o.from, to: o.to, dryRun: o.dryRun },
      archiveRewriterFor(target),
    ).catch(sayWhoHoldsTheArchive);
    if (o.json) {
      console.log(JSON.stringify(report));
      return;
    }
    console.log(
      `${o.dryRun ? "would change" : "changed"} ${report.changed} of ${report.lines} lines in ${report.rewritten} of ${report.objects} objects (+${report.edges} edge objects)${report.changed && !o.dryRun ? "; recompute those days: npm run rollup -- --from … --to …" : ""}`,
    );
    for (const line of keyValueLines(Object.entries(report.byTrigger))) console.log(`  ${line}`);
    if (report.recompacted.length)
      console.log(
        `${o.dryRun ? "would compact again" : "compacted again"} (their Parquet held the old lines): ${report.recompacted.join(", ")}`,
      );
    if (report.uncompacted.length)
      console.log(
        `left uncompacted (read from their NDJSON, right but slower): ${report.uncompacted.join(", ")}; compact them with webhook compact --from … --to …`,
      );
  } finally {
    target.destroy();
  }
}

const program = withTarget(
  new Command("rederive")
    .description(
      "Derive the event time and natural key of archived lines again, after a change of how they are derived",
    )
    .option("--app <appId>", "one app (default: all)")
    .option("--from <date>", "first archive date, YYYY-MM-DD (or today, yesterday)", utcDayOption())
    .option("--to <date>", "last archive date, YYYY-MM-DD (or today, yesterday)", utcDayOption())
    .option("--dry-run", "count what would change, write nothing")
    .option("--json", "one JSON object on stdout"),
).action((o: RederiveCliOptions) => run(o));

process.exitCode = await runProgram(program, process.argv.slice(2));
