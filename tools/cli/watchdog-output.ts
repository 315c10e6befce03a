/**
 * What the watchdog's commands print for a person (#52): the silent apps (`apps --silent`, the
 * rollup's WARN line, `npm start`'s status line) and each finding of `apps --check`, with what to
 * run and what was lost and cannot be recovered from this side.
 */

import { duration } from "../../shared/watchdog/log-fields";
import type { CheckCounts, WebhookFinding } from "../../shared/watchdog/platform-check";
import type { SilenceReport } from "../../shared/watchdog/silence";
import { count, isoTime, tableLines } from "./format";

/** ` --stack <name>` when the command pointed at one: every command it names points at the same. */
const at = (stack: string | undefined) => (stack ? ` --stack ${stack}` : "");

/**
 * `apps --silent`: a row per silent app (since when, for how long, what its hours expected
 * meanwhile), then what to run; nothing silent is one line.
 *
 * @example silenceLines(report, undefined)[0] // "app        last seen             silent for  expected"
 */
export function silenceLines(report: SilenceReport, stack: string | undefined): string[] {
  const judged = `${count(report.judged, "app")} judged${report.learning ? `, ${report.learning} still learning (first delivery today or yesterday)` : ""}`;
  if (report.silent.length === 0) return [`no app is silent (${judged}, ${isoTime(report.at)})`];
  return [
    ...tableLines(
      report.silent.map((s) => ({
        app: s.appId,
        "last seen": isoTime(s.lastSeenAt),
        "silent for": duration(s.silentForMs),
        expected: `${s.expected} deliveries`,
      })),
    ),
    "",
    `${count(report.silent.length, "app")} silent of ${judged}: their webhooks on the platform side: npx webhook apps --check${at(stack)}`,
  ];
}

const PROBLEM: Record<Exclude<WebhookFinding["state"], "ok" | "unchecked">, string> = {
  missing: "its webhook is gone",
  disabled: "its webhook is disabled",
  "points-elsewhere": "its webhook points elsewhere",
  "no-basic-auth": "its webhook sends no credentials",
  "username-refused": "its webhook's credential is refused",
  "triggers-narrowed": "its webhook's triggers were narrowed",
};

/**
 * A finding of `apps --check` in three lines: what is wrong, what to run, what was lost. Nothing
 * for an app whose webhook is right.
 *
 * @example findingLines({ appId: "a1", state: "disabled", detail: "webhook w is disabled" }, { stack: undefined, lastSeenAt: undefined })
 */
export function findingLines(
  finding: WebhookFinding,
  context: { stack: string | undefined; lastSeenAt?: number },
): string[] {
  if (finding.state === "ok") return [];
  if (finding.state === "unchecked")
    return [
      `${finding.appId}: not checked: ${finding.detail} (run again: --after <the last app reported> resumes)`,
    ];
  const since =
    context.lastSeenAt === undefined
      ? "since the change"
      : `since ${isoTime(context.lastSeenAt)} (its last delivery seen)`;
  return [
    `${finding.appId}: ${PROBLEM[finding.state]}: ${finding.detail}`,
    `  run: npx webhook connect --app ${finding.appId}${at(context.stack)} (re-creates, re-enables, repoints it with an accepted credential), then npx webhook reconcile --app ${finding.appId} --region <us|eu|in>${at(context.stack)} (presence and users)`,
    finding.state === "triggers-narrowed"
      ? `  lost: the events of those triggers since the change (the others kept coming): the platform never sent them; reconcile recovers presence and users, not messages, calls or group events`
      : `  lost: every delivery ${since}: the platform retries for ~40 s only; messages, calls and group events of that window cannot be recovered from this side`,
  ];
}

/** The check's last line. @example checkSummary(counts, 12.3) // "1,000 apps checked: 996 ok, 1 disabled, … in 12.3 s" */
export function checkSummary(counts: CheckCounts, seconds: number): string {
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  const problems = Object.entries(counts)
    .filter(([state, n]) => state !== "ok" && n > 0)
    .map(([state, n]) => `${n} ${state}`);
  return `${count(total, "app")} checked: ${counts.ok} ok${problems.length ? `, ${problems.join(", ")}` : ""} in ${seconds.toFixed(1)} s`;
}

/** A refused username as `apps --refused` prints it. */
export interface RefusedRow {
  username: string;
  refusals: number;
  lastAt?: number;
  /** The connected apps whose webhook delivers as it (the apps table). */
  apps: string[];
  /** Whether the ingest holds a credential of that name (then: a password changed by hand). */
  accepted: boolean;
}

/**
 * `apps --refused`: a row per username refused in the last hour (as the log keeps it), its apps
 * and what to run; nothing refused is one line.
 *
 * @example refusedLines([], { stack: undefined, one: false }) // ["no known username refused in the last hour"]
 */
export function refusedLines(
  rows: readonly RefusedRow[],
  context: { stack: string | undefined; one: boolean },
): string[] {
  if (rows.length === 0) return ["no known username refused in the last hour"];
  const lines = rows.map((r) => {
    const apps = r.apps.length
      ? `${count(r.apps.length, "app")} deliver with it (${r.apps.slice(0, 5).join(", ")}${r.apps.length > 5 ? ", …" : ""})`
      : "no connected app delivers with it (the apps table)";
    const why = r.accepted
      ? "the ingest holds it: a password changed by hand on the platform"
      : "the ingest no longer accepts it";
    const refused = context.one
      ? ""
      : `${r.refusals} refused${r.lastAt ? `, last ${isoTime(r.lastAt)}` : ""}: `;
    return `${r.username}: ${refused}${apps}; ${why}`;
  });
  const some = rows.find((r) => r.apps.length)?.apps[0] ?? "<appId>";
  return [
    ...lines,
    `run: npx webhook apps --check${at(context.stack)} (each app's webhook on the platform), then npx webhook connect --app ${some}${at(context.stack)} (sets its credential again)`,
  ];
}
