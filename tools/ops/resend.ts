/**
 * `npm run resend -- <eventId> [--app <appId>] [--date YYYY-MM-DD] [--dry-run] [--stack <name> | --state-dir <dir>]`:
 * puts one event back on the events queue, from the quarantine (after a schema fix, say) or the
 * raw archive, with its first receipt time.
 */
import { Command } from "commander";
import { isoDate, runProgram, UserFacingError, withTarget } from "../cli";
import { resolveTarget } from "../target";
import { eventIdPrefix, shortId } from "./event-id";
import { findEvent, resendEvent } from "./inspect";

interface ResendOptions {
  app?: string;
  date?: string;
  dryRun?: boolean;
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
    const id = shortId(found.line.eventId);
    const what = `${found.line.trigger} of ${found.line.appId ?? "(no app)"} received ${new Date(found.line.receivedAt).toISOString()}, from the ${found.source}`;
    if (o.dryRun) {
      console.log(`would resend ${id}: ${what}`);
      return;
    }
    await resendEvent(target.sqs, target.s3, target.bucket, target.queues.events.url, found.line);
    console.log(`resent ${id}: ${what}`);
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
    .option("--dry-run", "find it and say what would be sent"),
).action((eventId: string, o: ResendOptions) => run(eventId, o));

process.exitCode = await runProgram(program, process.argv.slice(2));
