/**
 * `query stats`: item counts and the projector's and recorder's outcome counts, a row each.
 */
import type { Command } from "commander";
import { outcomeStats } from "../stats";
import type { Row } from "./helpers";
import { withWide } from "./helpers";
import type { Run } from "./runner";

/** Adds `stats`: item counts and outcome counts. */
export function addStatsCommand(program: Command, run: Run): void {
  withWide(program.command("stats"))
    .description("item counts and projector/recorder outcome counts")
    .option("--app <appId>", "one app")
    .option("--json", "one JSON value on stdout")
    .action(
      run(async (_q, o, target) => {
        const s = await outcomeStats(target, o.app as string | undefined, o.stateDir as string | undefined);
        const rows: Row[] = [
          ...Object.entries(s.items).map(([what, n]) => ({ what: `items: ${what}`, count: n })),
          ...Object.entries(s.outcomes).flatMap(([service, counts]) =>
            Object.entries(counts).map(([outcome, n]) => ({ what: `${service}: ${outcome}`, count: n })),
          ),
        ];
        return { json: s, rows };
      }),
    );
}
