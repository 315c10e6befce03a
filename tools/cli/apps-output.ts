/**
 * What `connect` and `rotate-credentials` print for a person: one line per app or credential and
 * a summary, in sentences that read right for one or many, a dry run or a run (usernames only,
 * never a password).
 */
import type { ConnectAction, ConnectReport } from "../../shared/apps/connect";
import type { RotationReport } from "../../shared/apps/rotate";
import { count, isoTime } from "./format";

const DONE: Record<ConnectAction, string> = { create: "created", update: "updated", unchanged: "unchanged" };

/** What happened (or would) to an app's webhook: `created`, `would be updated (username)`, `unchanged`. */
function actionText(action: ConnectAction, dryRun: boolean, changes: readonly string[]): string {
  const done = DONE[action];
  const text = dryRun && action !== "unchanged" ? `would be ${done}` : done;
  return action === "update" && changes.length ? `${text} (${changes.join(", ")})` : text;
}

/** At most five ids, then "…". */
export function preview(ids: readonly string[]): string {
  return `${ids.slice(0, 5).join(", ")}${ids.length > 5 ? ", …" : ""}`;
}

/**
 * `connect`'s lines: each app that changed (every app when there are at most 20) on stdout, each
 * failure on stderr, then the summary; and the error of a run with failures (exit 1), if any.
 *
 * @example connectLines(report, 1.2).stdout.at(-1) // "1 app: 1 created, 0 updated, 0 unchanged; 1 list, 1 write in 1.2 s"
 */
export function connectLines(
  report: ConnectReport,
  seconds: number,
): { stdout: string[]; stderr: string[]; error?: string } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const failed = report.apps.filter((a) => a.error);
  for (const a of report.apps)
    if (a.error) stderr.push(`${a.appId}: failed: ${a.error}`);
    else if (a.action !== "unchanged" || report.apps.length <= 20)
      stdout.push(`${a.appId}: ${actionText(a.action, report.dryRun, a.changes)}`);
  const n = (action: ConnectAction) => report.apps.filter((a) => !a.error && a.action === action).length;
  const would = report.dryRun ? "would be " : "";
  const changing = n("create") + n("update");
  stdout.push(
    `${report.dryRun ? "dry run: " : ""}${count(report.apps.length, "app")}: ${n("create")} ${would}created, ${n("update")} ${would}updated, ${n("unchanged")} unchanged${failed.length ? `, ${failed.length} failed` : ""}${changing === 0 && !failed.length ? " (nothing to change)" : ""}; ${count(report.calls.list, "list")}, ${count(report.calls.write, "write")} in ${seconds.toFixed(1)} s`,
  );
  if (!failed.length) return { stdout, stderr };
  const others = report.apps.length - failed.length;
  const rest =
    others === 0 ? "none was" : `the other ${others === 1 ? "app is" : `${count(others, "app")} are`}`;
  return {
    stdout,
    stderr,
    error: `${count(failed.length, "app")} not connected (${preview(failed.map((a) => a.appId))}): ${rest}; run again to retry ${failed.length === 1 ? "it" : "them"}`,
  };
}

/**
 * `rotate-credentials`' lines, one per credential: what was (or would be) done to it, and for a
 * rotation when its old pair was refused.
 *
 * @example rotationLines(report, false) // ["rotated: old → new; 3 apps switched; old refused since 2026-…Z"]
 */
export function rotationLines(report: RotationReport, restore: boolean): string[] {
  return report.credentials.map((c) => {
    const scope = c.appIds ? ` (for ${c.appIds.join(", ")})` : "";
    if (c.outcome === "dry-run") {
      const kept = c.unconnected.length
        ? `; but ${c.from} would be kept: ${count(c.unconnected.length, "app")} of its appIds never connected (${preview(c.unconnected)})`
        : "";
      return `would ${c.resumed ? `resume with ${c.to}` : "add a new credential"} beside ${c.from}${scope}, switch its ${count(c.apps.length, "connected app")} to it, then remove ${c.from}${kept}`;
    }
    if (restore)
      return `${c.outcome === "rotated" ? "restored" : "incomplete"}: ${c.from} → ${c.to}${scope}; ${count(c.confirmed.length, "app")} switched back${c.stillOld.length ? `, ${c.stillOld.length} not (${preview(c.stillOld)})` : ""}`;
    const switched = `${c.from} → ${c.to}${scope}; ${count(c.confirmed.length, "app")} switched`;
    if (c.outcome === "rotated")
      return `rotated: ${switched}; ${c.from} refused since ${isoTime(c.refusedAt)}`;
    if (c.outcome === "still-accepted")
      return `removed, still accepted: ${switched}; ${c.from} left the store at ${isoTime(c.removedAt)} and was still accepted past the ingest's cache (${isoTime(c.acceptedUntil)})`;
    if (c.outcome === "unconfirmed")
      return `removed, refusal unconfirmed: ${switched}; ${c.from} left the store at ${isoTime(c.removedAt)}, and the ingest answered ${c.unclear} instead of 401 past its cache (${isoTime(c.acceptedUntil)})`;
    return `incomplete: ${switched}, ${c.stillOld.length} not (${preview(c.stillOld)}): both stay valid`;
  });
}
