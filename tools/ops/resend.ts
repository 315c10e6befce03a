/**
 * `npm run resend -- <eventId> [--app <appId>] [--date YYYY-MM-DD] [--dry-run] [--stack <name> | --state-dir <dir>]`:
 * puts one event back on the events queue, from the quarantine (after a schema fix, say) or the
 * raw archive, with its first receipt time.
 */
import { Command } from "commander";
import { isoDate, runProgram, UserFacingError, withTarget } from "../cli";
import { isoTime } from "../format";
import { resolveTarget } from "../target";
import { eventIdPrefix, shortId } from "./event-id";
import { findEvent, resendEvent } from "./inspect";

interface ResendOptions {
  app?: string;
  date?: string;
  dryRun?: boolean;
  json?: boolean;
  stack?: string;
  stateDir?: string;
}

async function run(eventId: string, o: ResendOptions): Promise<void> {
  const target = await resolveTarget({ stack: o.stack, stateDir: o.stateDir });
  try {
    if (!target.bucket || !target.queues)
      throw new UserFacingError("the target has no data bucket or queues");
    const found = await findEvent(target.s3, target.bucket, eventId, { appId: o.app, date: o.date });
    if (!found)
      throw new UserFacingError(
        `event ${eventId} is in neither the quarantine nor the raw archive${o.app ? ` of ${o.app}` : ""}`,
      );
    const { eventId: fullId, trigger, appId, receivedAt } = found.line;
    if (!o.dryRun)
      await resendEvent(target.sqs, target.s3, target.bucket, target.queues.events.url, found.line);
    if (o.json) {
      console.log(
        JSON.stringify({
          eventId: fullId,
          trigger,
          appId,
          receivedAt,
          source: found.source,
          resent: !o.dryRun,
        }),
      );
      return;
    }
    const what = `${trigger} of ${appId ?? "(no app)"} received ${isoTime(receivedAt)}, from the ${found.source}`;
    console.log(`${o.dryRun ? "would resend" : "resent"} ${shortId(fullId)}: ${what}`);
  } finally {
    target.destroy();
  }
}

const program = withTarget(
  new Command("resend")
    .description("Put one event back on the events queue, from the quarantine or the raw archive")
    .argument(
      "<eventId>",
      "the event's id (the SHA-256 of its body), or a prefix of 12 or more hex characters",
      eventIdPrefix,
    )
    .option("--app <appId>", "where to look (faster)")
    .option("--date <day>", "its receipt day, YYYY-MM-DD (faster, with --app)", isoDate)
    .option("--dry-run", "find it and say what would be sent")
    .option("--json", "one JSON object on stdout"),
).action((eventId: string, o: ResendOptions) => run(eventId, o));

process.exitCode = await runProgram(program, process.argv.slice(2));
