/**
 * `query online`: the users online now, a row each, with since when and on which platform.
 */
import type { Command } from "commander";
import { app, iso, withApp, withWide } from "./helpers";
import type { Run } from "./runner";

/** Adds `online`: the users online now. */
export function addOnlineCommand(program: Command, run: Run): void {
  withWide(withApp(program.command("online").description("the users online now"))).action(
    run(async (q, o) => {
      const p = await q.online(app(o));
      return {
        json: p,
        rows: p.map((x) => ({ uid: x.uid, name: x.name, since: iso(x.since), platform: x.platform })),
      };
    }),
  );
}
