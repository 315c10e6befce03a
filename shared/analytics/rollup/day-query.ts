/**
 * The rollup's read of a day: one engine query (`sql/day-activity/`) over the day's raw archive
 * and edge gives every app's figures (or one app's) and, on a final pass, each app's day sets,
 * with the bytes the engine read. Every pass reads a day through it.
 */
import type { SqlEngine } from "../engines/sql-engine";
import { activityFromRows, type DayActivity, type DaySets, daySetsFromRows, TOP_LIMIT } from "../figures";
import { readQuery } from "../queries";
import { DAY_MS, dayStart, hoursBegun, receiptDaysOf } from "./days";
import type { RollupOptions } from "./dependencies";

/** What one engine query over a day gave: every app's activity (or one app's), and its cost. */
export interface DayActivities {
  activities: Map<string, DayActivity>;
  /**
   * With `users`: each app's day sets: its active users by uid (its `active_users` is their count),
   * conversations with a message, members' last changes, groups deleted.
   */
  daySets?: Map<string, DaySets>;
  queries: number;
  bytesScanned: number;
}

/**
 * Every app's figures of one day (or one app's, with `app`), computed from the archive in one
 * query, `sql/day-activity/`, over the day's raw archive and edge (`receiptDaysOf`), with the
 * top lists cut per app in SQL; and the bytes the engine read. An app is there when it has a line
 * on the day. Computed `asOf` a time within the day (a pass's `computedAt`), its hours are those
 * begun by then (`hoursBegun`): a fact timed later (a sender's clock ahead) counts in the day's
 * figures, and in its hour from the first pass after that hour begins. Default: the whole day.
 *
 * @example (await dayActivities(engine, "2026-01-02")).activities.get("app1")?.figures.messages // 9257
 */
export async function dayActivities(
  engine: SqlEngine,
  day: string,
  {
    app = "",
    neighbours = false,
    users = false,
    asOf = Number.POSITIVE_INFINITY,
  }: { app?: string; users?: boolean; asOf?: number } & Pick<RollupOptions, "neighbours"> = {},
): Promise<DayActivities> {
  const start = dayStart(day);
  const { first, last } = receiptDaysOf(day, { neighbours });
  const result = await engine.query(
    readQuery("day-activity"),
    {
      app,
      first_date: first,
      last_date: last,
      day,
      day_start: start,
      day_end: start + DAY_MS,
      top: TOP_LIMIT,
      users: users ? 1 : 0,
    },
    { from: first, to: last, edges: { from: day, to: day } },
  );
  const rowsByApp = new Map<string, typeof result.rows>();
  for (const row of result.rows) {
    const appId = String(row.app);
    const rows = rowsByApp.get(appId);
    if (rows) rows.push(row);
    else rowsByApp.set(appId, [row]);
  }
  const hours = hoursBegun(day, asOf);
  const activities = new Map(
    [...rowsByApp].map(([appId, rows]) => [appId, activityFromRows(rows, { hours, top: TOP_LIMIT })]),
  );
  const daySets = users
    ? new Map([...rowsByApp].map(([appId, rows]) => [appId, daySetsFromRows(rows)]))
    : undefined;
  return {
    activities,
    queries: 1,
    bytesScanned: result.bytesScanned,
    ...(daySets ? { daySets } : {}),
  };
}

/**
 * One day's figures of an app (`dayActivities` narrowed to it; all zero when it has no line that
 * day), and the bytes the engine read for them.
 *
 * @example (await dayActivity(engine, "app1", "2026-01-02")).activity.figures.messages // 9257
 */
export async function dayActivity(
  engine: SqlEngine,
  appId: string,
  day: string,
  options: Pick<RollupOptions, "neighbours"> = {},
): Promise<{ activity: DayActivity; bytesScanned: number }> {
  const { activities, bytesScanned } = await dayActivities(engine, day, { ...options, app: appId });
  return {
    activity: activities.get(appId) ?? activityFromRows([], { hours: 24, top: TOP_LIMIT }),
    bytesScanned,
  };
}
