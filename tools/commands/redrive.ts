/** `npm run redrive -- [--queue events|recordings|all] [--stack <name> | --state-dir <dir>]`: DLQ → queue. */
import { Command } from "commander";
import { oneOf, runProgram, UserFacingError, withTarget } from "../cli/program";
import { peekDeadLetters } from "../ops/inspect";
import { redrive } from "../ops/operations";
import { resolveTarget } from "../target";

interface RedriveOptions {
  queue: "events" | "recordings" | "all";
  dryRun?: boolean;
  json?: boolean;
  stack?: string;
  stateDir?: string;
}

async function run(o: RedriveOptions): Promise<void> {
  const target = await resolveTarget({ stack: o.stack, stateDir: o.stateDir });
  const report: Record<string, { moved: number } | { wouldMove: number }> = {};
  try {
    for (const name of ["events", "recordings"] as const) {
      if (o.queue !== "all" && o.queue !== name) continue;
      const q = target.queues?.[name];
      if (!q?.deadLetterUrl) throw new UserFacingError(`no ${name} queue on this target`);
      report[name] = o.dryRun
        ? { wouldMove: (await peekDeadLetters(target.sqs, q.deadLetterUrl, 10_000)).length }
        : { moved: await redrive(target.sqs, q.deadLetterUrl, q.url) };
    }
  } finally {
    target.destroy();
  }
  if (o.json) console.log(JSON.stringify(report));
  else
    for (const [name, r] of Object.entries(report))
      console.log(
        "moved" in r
          ? `${name}: moved ${r.moved} message(s) from the DLQ back to the queue`
          : `${name}: would move ${r.wouldMove} message(s) back to the queue`,
      );
}

const program = withTarget(
  new Command("redrive")
    .description("Move messages from a dead-letter queue back to its queue (local stack by default)")
    .option("--queue <name>", "events, recordings or all", oneOf("events", "recordings", "all"), "all")
    .option("--dry-run", "count what would be moved, move nothing")
    .option("--json", "one JSON object on stdout"),
).action((o: RedriveOptions) => run(o));

process.exitCode = await runProgram(program, process.argv.slice(2));
