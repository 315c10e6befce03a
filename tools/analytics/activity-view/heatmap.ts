/**
 * `--heatmap`: the concurrency heatmaps, per weekday (UTC) and hour the most users online and the
 * most calls in progress at once over the range's days (one Query a day); an hour not measured
 * blank, not 0. Text: an hour a row, a weekday a column; `--wide`: a weekday a row.
 */
import type { ActivityStore } from "../../../shared/analytics/store/activity-store";
import type { ActivityViewOptions, ActivityViewResult } from "./options";
import { type Note, type Section, textLines } from "./text";

const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"] as const;
const weekdayName = (w: number): string => WEEKDAYS[w] ?? "";
const HOURS = Array.from({ length: 24 }, (_, h) => String(h).padStart(2, "0"));

/**
 * The concurrency heatmaps: per weekday (UTC) and hour, the most users online at once
 * (`peak_online`) and the most calls in progress at once (`peak_calls`) in that hour on any of the
 * days, from each stored hour (the transitions in the order of facts); one Query per day.
 * Weekdays without a computed day are left out; an hour none of a weekday's days had begun when
 * computed (today's later hours) is blank (null in the JSON), not 0. The text: an hour a row, a weekday a column
 * (it fits whatever the peaks); `wide`, a weekday a row and the hours 00 to 23 as columns.
 */
export async function onlineHeatmap(
  store: ActivityStore,
  o: ActivityViewOptions,
  days: readonly string[],
  notes: Note[],
): Promise<ActivityViewResult> {
  // An hour no day of the weekday has measured (today's hours not begun when it was computed) stays null: blank, not 0.
  const grids = {
    online: new Map<number, Array<number | null>>(),
    calls: new Map<number, Array<number | null>>(),
  };
  for (const day of days) {
    const weekday = new Date(`${day}T00:00:00Z`).getUTCDay();
    const hours = await store.hours(o.app, day);
    for (const [what, figure] of [
      ["online", "peak_online"],
      ["calls", "peak_calls"],
    ] as const) {
      const row = grids[what].get(weekday) ?? Array.from({ length: 24 }, () => null);
      for (const h of hours) row[h.hour] = Math.max(row[h.hour] ?? 0, h.figures[figure]);
      grids[what].set(weekday, row);
    }
  }
  const weekdays = [...grids.online.keys()].sort((a, b) => ((a + 6) % 7) - ((b + 6) % 7));
  const byWeekday = (grid: Map<number, Array<number | null>>) =>
    Object.fromEntries(weekdays.map((w) => [WEEKDAYS[w], grid.get(w)]));
  // Hours as keys are integer-like ("10"…"23"): an object lists them first, so the order is given.
  const rows = (["online", "calls"] as const).flatMap((what) =>
    weekdays.map((w) => ({
      peak: what,
      weekday: WEEKDAYS[w],
      ...Object.fromEntries((grids[what].get(w) ?? []).map((v, hour) => [HOURS[hour], v ?? ""])),
    })),
  );
  const titles = {
    online: "The most users online at once, by hour (UTC) and weekday: the highest of the range's days.",
    calls: "The most calls in progress at once, by hour (UTC) and weekday: the highest of the range's days.",
  };
  const sections: Section[] = o.wide
    ? [{ columns: ["peak", "weekday", ...HOURS], rows }]
    : (["online", "calls"] as const).map((what) => ({
        title: titles[what],
        columns: ["hour", ...weekdays.map(weekdayName)],
        rows:
          weekdays.length === 0
            ? []
            : HOURS.map((hour, h) => ({
                hour,
                ...Object.fromEntries(weekdays.map((w) => [weekdayName(w), grids[what].get(w)?.[h] ?? ""])),
              })),
      }));
  return {
    json: { days: days.length, peakOnline: byWeekday(grids.online), peakCalls: byWeekday(grids.calls) },
    rows,
    lines: textLines(sections, notes, o.wide),
  };
}
