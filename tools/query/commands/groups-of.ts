/**
 * `query groups-of <uid>`: the groups of a user (`--all`: former groups too), a row each.
 */
import type { Command } from "commander";
import { app, arg, iso, withApp, withWide } from "./helpers";
import type { Run } from "./runner";

/** Adds `groups-of`: the groups of a user. */
export function addGroupsOfCommand(program: Command, run: Run): void {
  withWide(
    withApp(
      program
        .command("groups-of <uid>")
        .description("the groups of a user")
        .option("--all", "former groups too"),
    ),
  ).action(
    run(async (q, o) => {
      const m = await q.groupsOf(app(o), arg(o), { includeFormer: Boolean(o.all) });
      return {
        json: m,
        rows: m.map((x) => ({ guid: x.guid, status: x.status, scope: x.scope, joinedAt: iso(x.joinedAt) })),
      };
    }),
  );
}
