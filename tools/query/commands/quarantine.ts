/**
 * `query quarantine`: the quarantined events, newest first, with why each was refused.
 */
import type { Command } from "commander";
import { shortId } from "../../cli/event-id";
import { UserFacingError, utcDayOption } from "../../cli/program";
import { listQuarantine } from "../../ops/inspect";
import { iso, withWide } from "./helpers";
import type { Run } from "./runner";

/** Adds `quarantine`: the quarantined events. */
export function addQuarantineCommand(program: Command, run: Run): void {
  withWide(program.command("quarantine"))
    .description("the quarantined events, newest first, with why each was refused")
    .option("--app <appId>", "one app")
    .option("--date <day>", "one receipt day, YYYY-MM-DD, today or yesterday (with --app)", utcDayOption())
    .option("--json", "one JSON value on stdout")
    .action(
      run(async (_q, o, target) => {
        if (!target.bucket) throw new UserFacingError("the target has no data bucket");
        const events = await listQuarantine(target.s3, target.bucket, {
          appId: o.app as string | undefined,
          date: o.date as string | undefined,
        });
        return {
          json: events,
          rows: events.map((e) => ({
            eventId: shortId(e.eventId),
            trigger: e.trigger,
            appId: e.appId,
            receivedAt: iso(e.receivedAt),
            error: e.error,
          })),
        };
      }),
    );
}
