/**
 * One app's pass over a day (`rollupDay`): its figures recomputed and replaced in the activity
 * table, and on a final pass its day sets merged into the day's (or every app's written, the day
 * having none yet). `replaceDay`, the conditional write of one app's day, is shared with the pass
 * over every app.
 */
import { activityFromRows, type DayActivity, type DaySets, TOP_LIMIT } from "../figures";
import { hasDaySets, mergeAppDaySets, writeDaySets } from "../user-sets";
import { dayActivities } from "./day-query";
import { hoursBegun, isFinal } from "./days";
import type { DayRollup, RollupDependencies, RollupOptions } from "./dependencies";

/**
 * Recomputes one day of an app from the raw archive and replaces it in the activity table: the
 * query counts each fact once by its natural key, at its event time (`sql/day-activity/`), so
 * any number of redeliveries, redrives, replays or duplicated lines give the same figures. It
 * reads the day's raw archive and edge (`receiptDaysOf`), whether the day is over or not. The
 * day is final when computed after its end plus the grace period; `skipFinal` leaves a final
 * day as it is (the schedule), without reading the archive.
 *
 * A final day with `userSets` gives the app's users over time too (#40): the same query returns
 * the app's day sets, merged into the day's (`mergeAppDaySets`: the app's entry replaced, every
 * other app's kept). A day not closed yet for any app has no sets to merge into, and a day's sets
 * are every app's or none: its query then reads every app of the day (one query, the day's whole
 * bytes) and writes every app's sets (`writeDaySets`), the figures still this app's alone.
 * The caller holds the archive lease (`rollupDays` takes it; an erasure holds its own).
 *
 * @example await rollupDay("app1", "2026-01-02", deps) // { outcome: "written", final: true, daySets: "merged", … }
 * @throws SqlQueryError or the store's error: nothing of the day was written (the sets' error: the figures were)
 */
export async function rollupDay(
  appId: string,
  day: string,
  deps: RollupDependencies,
  options: RollupOptions = {},
): Promise<DayRollup> {
  if (options.skipFinal) {
    const stored = await deps.store.day(appId, day);
    if (stored?.final)
      return { appId, day, outcome: "skipped", final: true, computedAt: stored.computedAt, bytesScanned: 0 };
  }
  const computedAt = deps.now();
  const final = isFinal(day, computedAt, deps);
  const sets = final ? deps.userSets : undefined;
  const whole = sets !== undefined && !(await hasDaySets(sets, day));
  const { activities, daySets, bytesScanned } = await dayActivities(deps.engine, day, {
    ...options,
    app: whole ? "" : appId,
    users: sets !== undefined,
    asOf: computedAt,
  });
  await deps.checkpoint?.("read");
  const rollup = await replaceDay(deps, {
    appId,
    day,
    activity: activities.get(appId) ?? noActivity(day, computedAt),
    computedAt,
    final,
    bytesScanned,
  });
  await deps.checkpoint?.("figures");
  if (!sets || !daySets) return rollup;
  if (whole) await writeDaySets(sets, day, daySets);
  else await mergeAppDaySets(sets, day, appId, daySets.get(appId) ?? NO_SETS);
  await deps.checkpoint?.("sets");
  return { ...rollup, daySets: whole ? "written" : "merged" };
}

/** An app's figures of a day it has no line on, computed at `computedAt`: zeros, for the hours begun by then. */
export function noActivity(day: string, computedAt: number): DayActivity {
  return activityFromRows([], { hours: hoursBegun(day, computedAt), top: TOP_LIMIT });
}

/** An app's sets of a day it has no line on. */
const NO_SETS: DaySets = { users: [], conversations: [], members: [], deletions: [] };

/** One app's day replaced in the store (the condition on computedAt is the store's), and what became of it. */
export async function replaceDay(
  deps: RollupDependencies,
  write: {
    appId: string;
    day: string;
    activity: DayActivity;
    computedAt: number;
    final: boolean;
    bytesScanned: number;
  },
): Promise<DayRollup> {
  const { appId, day, activity, computedAt, final, bytesScanned } = write;
  const written = await deps.store.replace({ appId, day, ...activity, computedAt, final, bytesScanned });
  return { appId, day, outcome: written ? "written" : "superseded", final, computedAt, bytesScanned };
}
