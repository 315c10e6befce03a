/**
 * `query session <sessionId>`: a call or meeting as key/value lines, its recordings' archive
 * status (and, locally, their files), then its participants' stints as a table.
 */
import type { Command } from "commander";
import { epochTime, keyValueLines, tableLines } from "../../cli/format";
import { app, arg, iso, itemLines, recordingStatus, withApp, withFile } from "./helpers";
import type { Run } from "./runner";

/** Adds `session`: a call or meeting with its participants and recording. */
export function addSessionCommand(program: Command, run: Run): void {
  withApp(
    program
      .command("session <sessionId>")
      .description("a call or meeting with its participants and recording"),
  ).action(
    run(async (q, o, target) => {
      const s = await q.session(app(o), arg(o));
      if (!s) return { json: null, rows: [] };
      const { participants, recordings, ...rest } = s;
      const lines = itemLines(rest);
      const recordingLines = keyValueLines(
        Object.values(recordings ?? {}).flatMap((r) => [
          [`recording ${epochTime(r.startTime)}`, recordingStatus(r)] as const,
          [`  file`, withFile(target, o, r.key).file] as const,
        ]),
      );
      const stints = Object.values(participants ?? {}).map((p) => ({
        participant: p.name,
        joinedAt: iso(p.joinedAt),
        leftAt: iso(p.leftAt),
        atEnd: p.atEnd ? "yes" : "",
      }));
      return { json: s, rows: [], lines: [...lines, ...recordingLines, "", ...tableLines(stints)] };
    }),
  );
}
