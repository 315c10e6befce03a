/**
 * `query group <guid>`: a group's state, as aligned key/value lines.
 */
import type { Command } from "commander";
import { app, arg, itemLines, withApp } from "./helpers";
import type { Run } from "./runner";

/** Adds `group`: a group's state. */
export function addGroupCommand(program: Command, run: Run): void {
  withApp(program.command("group <guid>").description("a group's state")).action(
    run(async (q, o) => {
      const g = await q.group(app(o), arg(o));
      return {
        json: g ?? null,
        rows: [],
        lines: g ? itemLines(g) : [],
      };
    }),
  );
}
