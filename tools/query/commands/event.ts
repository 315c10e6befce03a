/**
 * `query event <eventId>`: where an event is and what it did: its receipt, outcome, archive
 * object, recording, and each item it touches (`ops/trace`).
 */
import type { Command } from "commander";
import { projectionStores } from "../../../shared/projector/stores";
import { eventIdPrefix, shortId } from "../../cli/event-id";
import { keyValueLines } from "../../cli/format";
import { UserFacingError, utcDayOption } from "../../cli/program";
import { traceEvent } from "../../ops/trace";
import { arg, iso, recordingStatus, withFile } from "./helpers";
import type { Run } from "./runner";

/** Adds `event`: where an event is and what it did. */
export function addEventCommand(program: Command, run: Run): void {
  program
    .command("event")
    .description("where an event is and what it did: its outcome, and each item it touches")
    .argument("<eventId>", "its id, or a prefix of 12 or more hex characters", eventIdPrefix)
    .option("--app <appId>", "where to look (faster)")
    .option(
      "--date <day>",
      "its receipt day, YYYY-MM-DD, today or yesterday (faster, with --app)",
      utcDayOption(),
    )
    .option("--json", "one JSON value on stdout")
    .action(
      run(async (_q, o, target) => {
        if (!target.bucket) throw new UserFacingError("the target has no data bucket");
        const trace = await traceEvent(
          target,
          target.bucket,
          target.queues?.events.deadLetterUrl,
          projectionStores(target.dynamo, target.tables),
          arg(o),
          { appId: o.app as string | undefined, date: o.date as string | undefined },
        );
        const r = trace.recording;
        return {
          found: trace.key !== undefined || trace.outcome === "dead-lettered",
          json: trace,
          rows: [],
          lines: keyValueLines([
            ["event", shortId(trace.eventId)],
            ["trigger", trace.trigger],
            ["app", trace.appId],
            ["received", iso(trace.receivedAt)],
            ["outcome", trace.outcome],
            ["error", trace.error],
            ["note", trace.note],
            [
              "erased",
              trace.erasure &&
                `redacted by erasure ${trace.erasure}: the erased user is a pseudonym, free text removed`,
            ],
            ["object", trace.key],
            ["recording", r && recordingStatus(r)],
            ["file", withFile(target, o, r?.key).file],
            ...(trace.items ?? []).map(
              (i) =>
                ["touches", `${i.table} ${i.key.pk}${i.key.sk ? `/${i.key.sk}` : ""}: ${i.state}`] as const,
            ),
          ]),
        };
      }),
    );
}
