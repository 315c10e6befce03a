/**
 * `--top groups|users`: each day's busiest groups or users (one Query a day), ranked, every
 * column they have; a computed day with nothing to rank is said in a note, rather than printing
 * nothing at all. Its `--json`: each day's stamp and its list.
 */
import type { ActivityStore, StoredDay } from "../../../shared/analytics/store/activity-store";
import { dayRanges, rangeText } from "./notes";
import type { ActivityViewOptions, ActivityViewResult, Row } from "./options";
import { type Note, stamp, textLines } from "./text";

/** The top groups (or users) of each computed day of the range: their `--json`, rows and text lines. */
export async function topListsView(
  store: ActivityStore,
  o: ActivityViewOptions,
  days: readonly StoredDay[],
  notComputed: readonly Note[],
): Promise<ActivityViewResult> {
  const json = [];
  const rows: Row[] = [];
  // Computed days with nothing to rank: said, rather than printing nothing at all.
  const unranked: string[] = [];
  for (const d of days) {
    const top =
      o.top === "groups"
        ? await store.topGroups(o.app, d.day, o.limit)
        : await store.topUsers(o.app, d.day, o.limit);
    json.push({ day: d.day, ...stamp(d), [o.top === "groups" ? "groups" : "users"]: top });
    if (top.length === 0) unranked.push(d.day);
    top.forEach((t, i) => {
      rows.push({ day: d.day, rank: i + 1, ...t, final: d.final });
    });
  }
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const nothingToRank = dayRanges(unranked).map((r) => ({
    text: `${rangeText(r)}: no message${o.top === "groups" ? " to a group" : ""}, so no ${o.top === "groups" ? "group" : "user"} to rank.`,
  }));
  return { json, rows, lines: textLines([{ columns, rows }], [...notComputed, ...nothingToRank], o.wide) };
}
