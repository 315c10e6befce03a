/**
 * What `import` prints for a person: the counts as aligned lines (a dry run only those it can
 * know: nothing was sent, so nothing was imported or refused), the first refusals, and on stderr
 * why the run exits 1.
 */
import type { ImportSummary } from "../../shared/imports/run-import";
import { count, keyValueLines } from "./format";

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
