/** `npm run redrive -- [--queue events|recordings|all] [--stack <name> | --state-dir <dir>]`: DLQ → queue. */
import { Command } from "commander";
import { oneOf, runProgram, UserFacingError, withTarget } from "../cli";
import { resolveTarget } from "../target";
import { peekDeadLetters } from "./inspect";
import { redrive } from "./operations";

interface RedriveOptions {
  queue: "events" | "recordings" | "all";
  dryRun?: boolean;
  stack?: string;
  stateDir?: string;
}

async function run(o: RedriveOptions): Promise<void> {
  const target = await resolveTarget({ stack: o.stack, stateDir: o.stateDir });
  try {
    for (const name of ["events", "recordings"] as const) {
      if (o.queue !== "all" && o.queue !== name) continue;
      const q = target.queues?.[name];
      if (!q?.deadLetterUrl) throw new UserFacingError(`no ${name} queue on this target`);
      if (o.dryRun) {
        console.log(
          `${name}: would move ${(await peekDeadLetters(target.sqs, q.deadLetterUrl, 10_000)).length} message(s) back to the queue`,
        );
        continue;
      }
      console.log(
        `${name}: moved ${await redrive(target.sqs, q.deadLetterUrl, q.url)} message(s) from the DLQ back to the queue`,
      );
    }
  } finally {
    target.destroy();
  }
}

const program = withTarget(
  new Command("redrive")
    .description("Move messages from a dead-letter queue back to its queue (local stack by default)")
    .option("--queue <name>", "events, recordings or all", oneOf("events", "recordings", "all"), "all")
    .option("--dry-run", "count what would be moved, move nothing"),
).action((o: RedriveOptions) => run(o));

process.exitCode = await runProgram(program, process.argv.slice(2));
