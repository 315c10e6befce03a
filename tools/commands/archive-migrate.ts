/**
 * `npx webhook archive-migrate [--back] [--json] [--stack <name>]`: the archive's one-shot layout
 * rewrite, under the archive lease (held by another rewrite: it says by whom and changes nothing);
 * a compacted day it adds objects to is compacted again.
 */
import { Command } from "commander";
import { archiveRewriterFor, sayWhoHoldsTheArchive } from "../analytics/engines";
import { keyValueLines } from "../cli/format";
import { runProgram, UserFacingError, withTarget } from "../cli/program";
import { migrateArchive } from "../ops/archive-migrate";
import { resolveTarget } from "../target";

interface MigrateCliOptions {
  back?: boolean;
  json?: boolean;
  stack?: string;
  stateDir?: string;
}

async function run(o: MigrateCliOptions): Promise<void> {
  const target = await resolveTarget({ stack: o.stack, stateDir: o.stateDir });
  try {
    if (!target.bucket) throw new UserFacingError("the target has no data bucket");
    const report = await migrateArchive(target.s3, target.bucket, archiveRewriterFor(target), {
      back: o.back,
    }).catch(sayWhoHoldsTheArchive);
    if (o.json) console.log(JSON.stringify(report));
    else
      for (const line of keyValueLines(
        Object.entries(report).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : v] as const),
      ))
        console.log(line);
  } finally {
    target.destroy();
  }
}

const program = withTarget(
  new Command("archive-migrate")
    .description(
      "Rewrite a raw archive written per app (raw/app=<app>/date=<day>/) into the batch layout (raw/date=<day>/hour=<hh>/); --back rewrites it the other way, for a rollback",
    )
    .option("--back", "from the batch layout back to objects per app (what the previous version reads)")
    .option("--json", "one JSON object on stdout"),
).action((o: MigrateCliOptions) => run(o));

process.exitCode = await runProgram(program, process.argv.slice(2));
