/**
 * `npm run resend -- <eventId> [--app <appId>] [--date YYYY-MM-DD] [--dry-run] [--stack <name> | --state-dir <dir>]`:
 * puts one event back on the events queue, from the quarantine (after a schema fix, say) or the
 * raw archive, with its first receipt time.
 */
import { Command } from "commander";
import { eventIdPrefix, shortId } from "../cli/event-id";
import { isoTime } from "../cli/format";
import { runProgram, UserFacingError, utcDayOption, withTarget } from "../cli/program";
import { resendById } from "../ops/inspect";
import { resolveTarget } from "../target";

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
    const { report, searched } = await resendById(
      target,
      { bucket: target.bucket, queueUrl: target.queues.events.url },
      eventId,
      { appId: o.app, date: o.date, dryRun: o.dryRun },
    );
    if (!report)
      throw new UserFacingError(
        `event ${eventId} is in neither the quarantine nor the raw archive${o.app ? ` of ${o.app}` : ""} (looked in ${searched}; --date or --days to look elsewhere)`,
      );
    if (o.json) {
      console.log(JSON.stringify(report));
      return;
    }
    const what = `${report.trigger} of ${report.appId ?? "(no app)"} received ${isoTime(report.receivedAt)}, from the ${report.source}`;
    console.log(`${o.dryRun ? "would resend" : "resent"} ${shortId(report.eventId)}: ${what}`);
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
    .option(
      "--date <day>",
      "its receipt day, YYYY-MM-DD, today or yesterday (faster, with --app)",
      utcDayOption(),
    )
    .option("--dry-run", "find it and say what would be sent")
    .option("--json", "one JSON object on stdout"),
).action((eventId: string, o: ResendOptions) => run(eventId, o));

process.exitCode = await runProgram(program, process.argv.slice(2));
