import { count, tableLines, wrapLine } from "../cli/format";
import type { SimulationReport } from "./run";

/** What each answer of the webhook means, for the summary. */
const STATUS_MEANING: Record<string, string> = {
  "0": "no answer (connection refused, reset or timed out)",
  "200": "accepted",
  "400": "refused: invalid body",
  "401": "refused: wrong credentials",
  "403": "refused: app not allowed",
  "404": "no such route",
  "413": "refused: body too large",
  "429": "throttled",
  "503": "not stored (the platform would retry)",
  unsubscribed: "not sent: the app has no enabled webhook subscribed to the trigger",
};

/**
 * What the deliveries were: the history's events, and how many were sent a second time (the
 * platform's duplicates and retries, `--duplicates`), so that 5,270 deliveries for 5,000 events
 * reads right. Nothing when interrupted (the split of a prefix is not known) or without a history.
 */
function duplicatesNote(
  report: Pick<SimulationReport, "sent" | "interrupted" | "dropped"> &
    Partial<Pick<SimulationReport, "history">>,
): string {
  if (!report.history || report.interrupted) return "";
  const events = report.history.events.length - report.dropped;
  const twice = report.sent - events;
  if (twice <= 0) return `  ${count(events, "event")}`;
  return `  ${count(events, "event")}, ${twice.toLocaleString("en-US")} of them sent twice as the platform's duplicates (--duplicates)`;
}

/** Differences shown before "… and N more". */
const SHOWN_PROBLEMS = 50;

/**
 * The summary `simulate` prints: deliveries and rate, each status with what it means, the
 * deliveries by trigger, the drain time and the check (at most 50 differences, then how many
 * more). `code` is the exit code: 130 interrupted, 1 a difference, an answer other than 200 or a
 * stack that went away mid-run.
 */
export function summaryLines(
  report: Omit<SimulationReport, "history" | "platform"> & Partial<Pick<SimulationReport, "history">>,
  rate: number,
  checkOnly = false,
): { lines: string[]; warnings: string[]; code: number } {
  const lines: string[] = [];
  const warnings: string[] = [];
  if (checkOnly) lines.push("\ncheck only: nothing sent");
  else {
    const line = report.interrupted ? "interrupted: sent" : "sent";
    const acknowledged = report.byStatus["200"] ?? 0;
    lines.push(
      `\n${line} ${count(report.sent, "delivery", "deliveries")} (${acknowledged.toLocaleString("en-US")} acknowledged) in ${report.seconds.toFixed(1)} s (${report.deliveriesPerSecond.toFixed(0)}/s)`,
    );
    const duplicates = duplicatesNote(report);
    if (duplicates) lines.push(...wrapLine(duplicates, 100, "    "));
    if (report.interrupted && report.recordingsSent)
      lines.push(
        ...wrapLine(
          `  ${count(report.recordingsSent, "recording")} of what was sent ${report.recordingsSent === 1 ? "is" : "are"} served by this simulator's file server, closed with it: the recorder's fetches fail (a WARN line, then retried until dead-lettered; the stack shows the first and keeps the rest in stack.log)`,
          100,
          "    ",
        ),
      );
    if (!report.interrupted && report.sent > 50 && report.deliveriesPerSecond < rate * 0.9)
      warnings.push(
        ...wrapLine(
          `warning: ${report.deliveriesPerSecond.toFixed(0)}/s is below the requested ${rate}/s: raise --concurrency, or the webhook is the limit`,
        ),
      );
    lines.push(
      "",
      ...tableLines(
        Object.entries(report.byStatus).map(([status, n]) => ({
          status,
          meaning: STATUS_MEANING[status] ?? "",
          deliveries: n,
        })),
      ),
      "",
      ...tableLines(
        Object.entries(report.byTrigger)
          .sort((a, b) => b[1] - a[1])
          .map(([trigger, n]) => ({ trigger, deliveries: n })),
      ),
    );
  }
  if (report.drainSeconds !== undefined && !checkOnly)
    lines.push(`queues drained ${report.drainSeconds.toFixed(1)} s after the last delivery`);
  let code = report.interrupted ? 130 : 0;
  if (report.stackGone !== undefined) {
    lines.push(
      ...wrapLine(`the local stack went away (${report.stackGone}): nothing was drained or checked`),
    );
    code ||= 1;
  }
  if (report.problems) {
    if (report.problems.length === 0) lines.push("check: the tables match the history ✔");
    else {
      lines.push(`check: ${report.problems.length} difference(s):`);
      for (const p of report.problems.slice(0, SHOWN_PROBLEMS))
        lines.push(...wrapLine(`  ${p}`, 100, "    "));
      if (report.problems.length > SHOWN_PROBLEMS)
        lines.push(`  … and ${report.problems.length - SHOWN_PROBLEMS} more`);
      code = 1;
    }
  }
  // Not sent because the platform's stand-in had no webhook for it (--connect): no failure here.
  if (Object.keys(report.byStatus).some((s) => s !== "200" && s !== "unsubscribed")) code ||= 1;
  return { lines, warnings, code };
}
