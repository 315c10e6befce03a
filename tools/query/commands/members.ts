/**
 * `query members <guid>`: a group's current members (`--all`: former members too), a row each.
 */
import type { Command } from "commander";
import { app, arg, iso, withApp, withWide } from "./helpers";
import type { Run } from "./runner";

/** Adds `members`: a group's current members. */
export function addMembersCommand(program: Command, run: Run): void {
  withWide(
    withApp(
      program
        .command("members <guid>")
        .description("a group's current members")
        .option("--all", "former members too"),
    ),
  ).action(
    run(async (q, o) => {
      const m = await q.members(app(o), arg(o), { includeFormer: Boolean(o.all) });
      return {
        json: m,
        rows: m.map((x) => ({
          uid: x.uid,
          name: x.name,
          status: x.status,
          scope: x.scope,
          joinedAt: iso(x.joinedAt),
          by: x.by,
        })),
      };
    }),
  );
}
