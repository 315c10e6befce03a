/**
 * The day table, `query activity`'s default view: a row per day of the range (one Query), the
 * figures a person reads first in the text that fits, every figure with `--wide`; with
 * `--calls` or `--latency`, their figures instead. A day the rollup has not computed is a row of
 * `—` and a note with the rollup to run. Its `--json`: the stored days with their derived figures.
 */
import { derivedFigures, type Figures } from "../../../shared/analytics/figures";
import type { StoredDay } from "../../../shared/analytics/store/activity-store";
import { CALL_COLUMNS, callSections } from "./calls";
import { LATENCY_COLUMNS, latencySections } from "./latency";
import type { ActivityViewOptions, ActivityViewResult } from "./options";
import { blankRow, type Note, ratioText, stamp, textLines } from "./text";

/** The figures shown in a day's row of the wide table (all of them are in `--json`). */
const DAY_COLUMNS: ReadonlyArray<keyof Figures> = [
  "messages",
  "active_users",
  "active_senders",
  "peak_online",
  "groups_created",
  "member_joins",
  "calls_audio",
  "calls_video",
  "calls_started",
  "call_seconds",
  "meeting_seconds",
  "recordings",
];

/** The figures a person reads first, in the table that fits `TERMINAL_COLUMNS`. */
const DAY_COLUMNS_FIRST = [
  "day",
  "messages",
  "active_users",
  "peak_online",
  "calls_started",
  "call_minutes",
  "meeting_minutes",
  "final",
];

/** Users per client platform, most first: `javascript 12, ios 3`. */
export const platformsText = (platforms: Record<string, number>) =>
  Object.entries(platforms)
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([p, n]) => `${p} ${n}`)
    .join(", ");

const minutes = (seconds: number) => Math.round((seconds / 60) * 100) / 100;

/**
 * The days of the range as the day table (or `--calls`', `--latency`'s): its `--json`, the wide
 * table's rows, and the text lines.
 */
export function dayView(
  o: ActivityViewOptions,
  days: readonly StoredDay[],
  missing: readonly string[],
  notComputed: readonly Note[],
): ActivityViewResult {
  const rows = [
    ...days.map((d) => {
      const derived = derivedFigures(d.figures);
      if (o.latency)
        return {
          day: d.day,
          ...Object.fromEntries(
            LATENCY_COLUMNS.map((f) =>
              f.endsWith("_ms") ? [f.replace(/_ms$/, "_s"), d.figures[f] / 1000] : [f, d.figures[f]],
            ),
          ),
          ...stamp(d),
        };
      if (o.calls)
        return {
          day: d.day,
          ...Object.fromEntries(CALL_COLUMNS.map((f) => [f, d.figures[f]])),
          per_call_ended: ratioText(derived.participants_per_call),
          per_meeting_ended: ratioText(derived.participants_per_meeting),
          ...stamp(d),
        };
      return {
        day: d.day,
        ...Object.fromEntries(
          DAY_COLUMNS.map((f) => [
            f.replace("_seconds", "_minutes"),
            f.endsWith("_seconds") ? minutes(d.figures[f]) : d.figures[f],
          ]),
        ),
        answer_rate: ratioText(derived.answer_rate),
        platforms: platformsText(d.platforms),
        ...stamp(d),
      };
    }),
    // A day not computed: its note below says the rollup to run.
    ...missing.map((day) => ({ day, computedAt: "— (not computed)" })),
  ].sort((a, b) => String(a.day).localeCompare(String(b.day)));
  const json = {
    days: days.map((d) => ({ ...d, derived: derivedFigures(d.figures) })),
    ...(missing.length ? { notComputed: missing } : {}),
  };
  const sections = o.wide
    ? [{ columns: [...new Set(rows.flatMap((r) => Object.keys(r)))], rows }]
    : o.latency
      ? latencySections(days, missing)
      : o.calls
        ? callSections(days, missing)
        : [
            {
              columns: DAY_COLUMNS_FIRST,
              rows: rows.map((r) => ("final" in r ? r : blankRow(DAY_COLUMNS_FIRST, String(r.day)))),
            },
          ];
  return { json, rows, lines: textLines(sections, notComputed, o.wide) };
}
