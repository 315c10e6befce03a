/**
 * `query recordings`: every recording of the app with its archive status (and, locally, its file),
 * a row each in the order a table that fits keeps.
 */
import type { Command } from "commander";
import { app, iso, type Row, withApp, withFile, withWide } from "./helpers";
import type { Run } from "./runner";

/**
 * A recording as a row, in the order a table that fits 100 columns keeps (`tableText`): the
 * session's id (66 characters on the platform), its status and time, then the rest; the widest
 * (the object's key, its local file) last, left out first.
 */
export function recordingRow(r: {
  sessionId: string;
  startTime: number;
  duration?: unknown;
  status: string;
  size?: number;
  failureReason?: string;
  key?: string;
  file?: string;
}): Row {
  return {
    sessionId: r.sessionId,
    status: r.status,
    startTime: iso(r.startTime * 1000),
    duration: r.duration,
    size: r.size,
    failureReason: r.failureReason,
    key: r.key,
    file: r.file,
  };
}

/** Adds `recordings`: the recordings, with their archive status. */
export function addRecordingsCommand(program: Command, run: Run): void {
  withWide(
    withApp(program.command("recordings").description("the recordings, with their archive status")),
  ).action(
    run(async (q, o, target) => {
      const sessions = await q.recordings(app(o));
      const recordings = sessions.flatMap((s) =>
        Object.values(s.recordings ?? {}).map((r) => ({
          sessionId: s.sessionId,
          ...r,
          ...withFile(target, o, r.key),
        })),
      );
      return {
        json: recordings,
        rows: recordings.map(recordingRow),
      };
    }),
  );
}
