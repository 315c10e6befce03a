/**
 * `npm run redrive -- [--queue events|recordings|all] [--stack <name> | --state-dir <dir>]`: DLQ → queue;
 * `--stream`: the facts the projector kept unpublished → the stream (#41).
 */
import { Command } from "commander";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { snsStreamPublisher } from "../../shared/stream/sns-publisher";
import { oneOf, runProgram, UserFacingError, withTarget } from "../cli/program";
import { peekDeadLetters } from "../ops/inspect";
import { redrive } from "../ops/operations";
import { queueDepth } from "../ops/queues";
import { erasedMarksRedaction, redriveUnpublished } from "../ops/stream";
import { resolveTarget } from "../target";

interface RedriveOptions {
  queue: "events" | "recordings" | "all";
  stream?: boolean;
  dryRun?: boolean;
  json?: boolean;
  stack?: string;
  stateDir?: string;
}

async function run(o: RedriveOptions): Promise<void> {
  const target = await resolveTarget({ stack: o.stack, stateDir: o.stateDir });
  const report: Record<string, { moved: number; failed?: number } | { wouldMove: number }> = {};
  try {
    if (o.stream) {
      const url = target.stream?.unpublishedUrl;
      if (!target.stream || !url) throw new UserFacingError("no stream (unpublished queue) on this target");
      report.stream = o.dryRun
        ? { wouldMove: await queueDepth(target.sqs, url) }
        : await redriveUnpublished(
            target.sqs,
            url,
            snsStreamPublisher(target.sns, target.stream.topicArn),
            // A fact naming a user erased since it was kept is redacted as the projector would (#50).
            target.appsTable
              ? erasedMarksRedaction(documentClient(target.dynamo), target.appsTable)
              : undefined,
          );
    }
    for (const name of o.stream ? [] : (["events", "recordings"] as const)) {
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
        name === "stream"
          ? "moved" in r
            ? `stream: published ${r.moved} unpublished fact(s)${r.failed ? `; ${r.failed} failed again and stay queued` : ""}`
            : `stream: would publish ${r.wouldMove} unpublished fact(s)`
          : "moved" in r
            ? `${name}: moved ${r.moved} message(s) from the DLQ back to the queue`
            : `${name}: would move ${r.wouldMove} message(s) back to the queue`,
      );
}

const program = withTarget(
  new Command("redrive")
    .description("Move messages from a dead-letter queue back to its queue (local stack by default)")
    .option("--queue <name>", "events, recordings or all", oneOf("events", "recordings", "all"), "all")
    .option(
      "--stream",
      "publish the facts kept in the stream's unpublished queue instead (the events go through the projector, which publishes them)",
    )
    .option("--dry-run", "count what would be moved, move nothing")
    .option("--json", "one JSON object on stdout"),
).action((o: RedriveOptions) => run(o));

process.exitCode = await runProgram(program, process.argv.slice(2));
