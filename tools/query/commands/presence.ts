/**
 * `query presence <uid>`: a user's presence, as aligned key/value lines.
 */
import type { Command } from "commander";
import { app, arg, itemLines, withApp } from "./helpers";
import type { Run } from "./runner";

/** Adds `presence`: a user's presence. */
export function addPresenceCommand(program: Command, run: Run): void {
  withApp(program.command("presence <uid>").description("a user's presence")).action(
    run(async (q, o) => {
      const p = await q.presence(app(o), arg(o));
      return {
        json: p ?? null,
        rows: [],
        lines: p ? itemLines(p) : [],
      };
    }),
  );
}
