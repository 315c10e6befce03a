/**
 * `query sessions --from --to`: the sessions in a time range (ISO 8601 or epoch seconds, the
 * earlier first), a row each.
 */
import type { Command } from "commander";
import { UsageError } from "../../cli/program";
import { app, iso, parseTime, sessionRow, withApp, withWide } from "./helpers";
import type { Run } from "./runner";

/** Adds `sessions`: the sessions in a time range. */
export function addSessionsCommand(program: Command, run: Run): void {
  withWide(
    withApp(
      program
        .command("sessions")
        .description("the sessions in a time range")
        .requiredOption("--from <time>", "ISO-8601 or epoch seconds", parseTime)
        .requiredOption("--to <time>", "ISO-8601 or epoch seconds", parseTime)
        .hook("preAction", (command) => {
          const { from, to } = command.opts<{ from: number; to: number }>();
          if (from > to)
            throw new UsageError(`--from ${iso(from)} is after --to ${iso(to)}: give the earlier time first`);
        }),
    ),
  ).action(
    run(async (q, o) => {
      const s = await q.sessionsBetween(app(o), Number(o.from), Number(o.to));
      return { json: s, rows: s.map(sessionRow) };
    }),
  );
}
