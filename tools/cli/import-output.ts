/**
 * What `import` prints for a person: the counts as aligned lines (a dry run only those it can
 * know: nothing was sent, so nothing was imported or refused), the first refusals, and on stderr
 * why the run exits 1.
 */
import { dayStart } from "../../shared/analytics/rollup/days";
import type { ImportSummary } from "../../shared/imports/run-import";
import { count, isoTime, keyValueLines } from "./format";

/** The refusals a text report lists before "… and N more". */
const SHOWN_REFUSALS = 20;

/**
 * The report's lines.
 *
 * @example importReportLines(summary, "users.ndjson") // ["import                          users of users.ndjson into app1", "read                            120", …]
 */
export function importReportLines(s: ImportSummary, file: string): string[] {
  const sent = s.dryRun
    ? []
    : ([
        ["imported", s.imported],
        ["already on the platform", s.existed],
      ] as const);
  const lines = keyValueLines([
    ["import", `${s.kind} of ${file} into ${s.app}${s.dryRun ? " (dry run: nothing was sent)" : ""}`],
    ["read", s.read],
    [s.dryRun ? "would send" : "sent", s.toSend - s.unsent],
    ...sent,
    ["already imported (skipped)", s.alreadyImported],
    ["repeated in the file (skipped)", s.duplicates],
    ["invalid (not sent)", s.invalid.length],
    ...(s.dryRun ? [] : ([["refused by the platform", s.refused.length]] as const)),
    ...(s.unsent
      ? ([["not sent yet", `${s.unsent} (run the same command again to send them)`]] as const)
      : []),
    ...(s.dryRun
      ? []
      : ([["requests", `${s.requests} in ${count(s.batches, "batch", "batches")}`]] as const)),
  ]);
  const refusals = [
    ...s.invalid.map((r) => ({ ...r, what: "invalid" })),
    ...s.refused.map((r) => ({ ...r, what: "refused" })),
  ];
  for (const r of refusals.slice(0, SHOWN_REFUSALS))
    lines.push(`${r.what} ${r.id ?? "(no uid)"} (${r.at}): ${r.reason}`);
  if (refusals.length > SHOWN_REFUSALS)
    lines.push(`… and ${refusals.length - SHOWN_REFUSALS} more (--json lists every one)`);
  return lines;
}

/**
 * Why the run exits 1 (anything not imported: invalid, refused or left unsent), for stderr; none
 * when everything was imported or skipped.
 *
 * @example importFailureNotes({ ...summary, invalid: [r1, r2] }) // ["not everything imported: 2 invalid lines (listed above); fix the file and run the same command again"]
 */
export function importFailureNotes(s: ImportSummary): string[] {
  const parts = [
    s.invalid.length ? count(s.invalid.length, "invalid line") : "",
    s.refused.length ? `${count(s.refused.length, "user")} refused by the platform` : "",
    s.unsent ? `${count(s.unsent, "user")} not sent yet` : "",
  ].filter(Boolean);
  if (parts.length === 0) return [];
  const listed = s.invalid.length + s.refused.length ? " (listed above)" : "";
  const then = s.invalid.length
    ? "fix the file and run the same command again"
    : "run the same command again";
  return [`not everything ${s.dryRun ? "would be " : ""}imported: ${parts.join(", ")}${listed}; ${then}`];
}

/**
 * When the users confirmed this run count in the figures (#52): an imported user is created on
 * their `createdAt`'s day, else on the import day (docs/analytics.md, "Imported users"), and a
 * day's figures from the day sets show "—" until it closes (its end plus the grace period) and a
 * rollup writes its sets. So those on closed days count now; those on a day still open (the
 * import day, for every user without `createdAt`) count once it closes: said with the time, UTC,
 * and the command that shows them.
 *
 * @example importCountsLines({ ...summary, countedOn: { days: { "2026-11-27": 100 }, withoutCreatedAt: 100 } }, { now, graceMinutes: 120 })
 *   // ["created users  100 users on 2026-11-27 (100 without createdAt: the import day):", "               \"—\" until the day closes at 2026-11-28T02:00:00Z …", …]
 */
export function importCountsLines(
  s: ImportSummary,
  o: { now: number; graceMinutes: number; targetArgs?: string },
): string[] {
  const days = Object.entries(s.countedOn?.days ?? {}).sort(([a], [b]) => a.localeCompare(b));
  if (days.length === 0) return [];
  const closesAt = (day: string) => dayStart(day) + 86_400_000 + o.graceMinutes * 60_000;
  const closed = days.filter(([day]) => closesAt(day) <= o.now);
  const open = days.filter(([day]) => closesAt(day) > o.now);
  const sum = (list: typeof days) => list.reduce((n, [, k]) => n + k, 0);
  const span = (list: typeof days) =>
    list.length === 1 ? list[0]?.[0] : `${list[0]?.[0]} … ${list.at(-1)?.[0]}`;
  const importDay = new Date(o.now).toISOString().slice(0, 10);
  const without = s.countedOn?.withoutCreatedAt ?? 0;
  const pairs: Array<[string, string]> = [];
  if (closed.length)
    pairs.push([
      "created users",
      `${count(sum(closed), "user")} on closed days (${span(closed)}): in the figures now`,
    ]);
  for (const [day, n] of open)
    pairs.push(
      [
        pairs.length ? "" : "created users",
        `${count(n, "user")} on ${day}${
          day === importDay && without ? ` (${without} without createdAt: the import day)` : ""
        }:`,
      ],
      ["", `"—" until the day closes at ${isoTime(closesAt(day))} (UTC: its end plus the`],
      ["", `${o.graceMinutes}-minute grace period) and a rollup then writes its sets (npm start's: every`],
      ["", "minute; deployed: its schedule)"],
    );
  const from = days[0]?.[0];
  const to = days.at(-1)?.[0];
  pairs.push([
    "see them",
    `npx webhook query activity --users --app ${s.app} --from ${from} --to ${to}${o.targetArgs ?? ""}`,
  ]);
  return keyValueLines(pairs);
}
