/**
 * `query sessions-of <uid>`: the sessions a user initiated or received, a row each.
 */
import type { Command } from "commander";
import { app, arg, sessionRow, withApp, withWide } from "./helpers";
import type { Run } from "./runner";

/** Adds `sessions-of`: the sessions a user initiated or received. */
export function addSessionsOfCommand(program: Command, run: Run): void {
  withWide(
    withApp(program.command("sessions-of <uid>").description("the sessions a user initiated or received")),
  ).action(
    run(async (q, o) => {
      const s = await q.sessionsOf(app(o), arg(o));
      return { json: s, rows: s.map(sessionRow) };
    }),
  );
}
