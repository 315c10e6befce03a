/**
 * `--hourly`: each day's hours (one Query a day), a row an hour; the first figures in the text
 * that fits, every one with `--wide`. Its `--json`: each day's stamp and its stored hours.
 */
import { HOURLY_FIGURES } from "../../../shared/analytics/figures";
import type { ActivityStore, StoredDay } from "../../../shared/analytics/store/activity-store";
import type { ActivityViewOptions, ActivityViewResult, Row } from "./options";
import { type Note, stamp, textLines } from "./text";

/** `--hourly`'s first figures. */
const HOUR_COLUMNS_FIRST = [
  "day",
  "hour",
  "messages",
  "active_users",
  "peak_online",
  "calls_started",
  "peak_calls",
  "final",
];

/** The hours of each computed day of the range: their `--json`, the wide table's rows, the text lines. */
export async function hourlyView(
  store: ActivityStore,
  o: ActivityViewOptions,
  days: readonly StoredDay[],
  notComputed: readonly Note[],
): Promise<ActivityViewResult> {
  const json = [];
  const rows: Row[] = [];
  for (const d of days) {
    const hours = await store.hours(o.app, d.day);
    json.push({ day: d.day, ...stamp(d), hours });
    for (const h of hours)
      rows.push({
        day: d.day,
        hour: String(h.hour).padStart(2, "0"),
        ...Object.fromEntries(HOURLY_FIGURES.map((f) => [f, h.figures[f]])),
        final: d.final,
      });
  }
  const columns = o.wide || o.top ? [...new Set(rows.flatMap((r) => Object.keys(r)))] : HOUR_COLUMNS_FIRST;
  return { json, rows, lines: textLines([{ columns, rows }], notComputed, o.wide) };
}
