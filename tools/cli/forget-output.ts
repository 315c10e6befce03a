/**
 * What `forget` prints for a person: the report as aligned lines (a dry run in the future tense),
 * and on stderr what a person should hear about it: an erasure that found nothing (a mistyped uid
 * or app id reads like a success otherwise).
 */
import type { ForgetReport } from "../../shared/erasure/plan";
import { keyValueLines } from "./format";

// A dry run's counts are what the run would do (found and evaluated, nothing written).
const VERBS: Record<string, string> = {
  rewritten: "rewrite",
  deleted: "delete",
  redacted: "redact",
  removed: "remove",
  recomputed: "recompute",
  recompacted: "recompact",
  published: "publish",
};

/**
 * The report's lines. `notified`: the target has a stream, so the run publishes an erasure notice
 * every subscriber of the app receives (docs/stream.md, "Erasure notices").
 *
 * @example forgetReportLines(report, { notified: true }) // ["erasure        5ecdb04e580aef21", "app            app1", …, "stream         erasure notice published (every subscriber of the app)", …]
 */
export function forgetReportLines(report: ForgetReport, { notified }: { notified: boolean }): string[] {
  const c = report.counts;
  const done = (past: string) => (report.dryRun ? `to ${VERBS[past] ?? past}` : past);
  const lines = keyValueLines([
    ["erasure", `${report.erasureId}${report.dryRun ? " (dry run: nothing was changed)" : ""}`],
    ["app", report.appId],
    ["scope", report.scope === "app" ? "the whole app" : "one user"],
    [
      "pseudonym",
      report.pseudonym && report.drawnForDryRun
        ? `${report.pseudonym} (this dry run's draw: the erasure draws its own)`
        : report.pseudonym,
    ],
    ["objects", `${c.objectsRewritten} ${done("rewritten")}, ${c.objectsDeleted} ${done("deleted")}`],
    ["lines", `${c.linesRedacted} ${done("redacted")}, ${c.linesRemoved} ${done("removed")}`],
    ["old versions", report.dryRun ? "" : `${c.versionsDeleted} deleted`],
    ["items", `${c.itemsDeleted} ${done("deleted")}, ${c.itemsRedacted} ${done("redacted")}`],
    [
      "recordings",
      report.keepRecordings
        ? `${report.plan.recordings.length} kept (--keep-recordings)`
        : `${report.plan.recordings.length} ${done("deleted")}`,
    ],
    ["days", `${c.daysRecomputed} ${done("recomputed")}, ${c.daysRecompacted} ${done("recompacted")}`],
    // Only a day whose raw archive has expired has its top lists rewritten in place; the others are recomputed.
    ["top lists", `${c.topListsRewritten} ${done("rewritten")} in place (days whose archive expired)`],
    ["rollup ledger", report.scope === "app" ? `${c.ledgerPassesRewritten} days ${done("rewritten")}` : ""],
    [
      "stream",
      !notified
        ? ""
        : foundCount(report) > 0
          ? `erasure notice ${done("published")} (every subscriber of the app)`
          : `nothing left here (erased already?): erasure notice ${done("published")} again`,
    ],
    ["bytes scanned", report.plan.bytesScanned],
  ]);
  for (const key of report.plan.recordings) lines.push(`  recording ${key}`);
  for (const note of report.unreached) lines.push(`not reached: ${note}`);
  return lines;
}

/** How many things the erasure found to erase (objects, items, recordings, days): none on a re-run. */
function foundCount({ plan }: Pick<ForgetReport, "plan">): number {
  return (
    plan.objects.length +
    plan.items.length +
    plan.recordings.length +
    plan.topListDays.length +
    plan.ledgerDays.length
  );
}

/**
 * What stderr says of the report: an erasure that found nothing at all: a re-run, or a mistyped
 * uid or app id (a uid is matched whole: `u1` is not `u10`).
 *
 * @example forgetNotes(report, "u1O") // ["note: nothing in app app1 names u1O: erased already, or a mistyped uid (matched whole)"]
 */
export function forgetNotes(report: ForgetReport, uid: string | undefined): string[] {
  if (foundCount(report) > 0) return [];
  return [
    uid === undefined
      ? `note: nothing holds app ${report.appId}: erased already, or a mistyped app id`
      : `note: nothing in app ${report.appId} names ${uid}: erased already, or a mistyped uid (matched whole)`,
  ];
}
