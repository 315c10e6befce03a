/**
 * `query dlq`: the dead-lettered messages of the events' or recordings' queue, with their
 * attributes and receive counts, peeked (not consumed).
 */
import type { Command } from "commander";
import { shortId } from "../../cli/event-id";
import { oneOf, UserFacingError } from "../../cli/program";
import { peekDeadLetters } from "../../ops/inspect";
import { iso, withWide } from "./helpers";
import type { Run } from "./runner";

/** Adds `dlq`: the dead-lettered messages. */
export function addDlqCommand(program: Command, run: Run): void {
  withWide(program.command("dlq"))
    .description("the dead-lettered messages, with their attributes and receive counts (not consumed)")
    .option("--queue <name>", "events or recordings", oneOf("events", "recordings"), "events")
    .option("--json", "one JSON value on stdout")
    .action(
      run(async (_q, o, target) => {
        const queue = target.queues?.[o.queue as "events" | "recordings"];
        if (!queue?.deadLetterUrl)
          throw new UserFacingError(`no ${String(o.queue)} dead-letter queue on this target`);
        const letters = await peekDeadLetters(target.sqs, queue.deadLetterUrl);
        return {
          json: letters,
          rows: letters.map((l) => ({
            messageId: l.messageId,
            receives: l.receiveCount,
            sentAt: iso(l.sentAt),
            trigger: l.attributes.trigger,
            appId: l.attributes.appId,
            eventId: l.attributes.eventId && shortId(l.attributes.eventId),
          })),
        };
      }),
    );
}
