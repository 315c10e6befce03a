/**
 * `query activity`'s entry: which view a command asks for (users over time and retention, the
 * groups, the heatmap, the hours, the top lists, or the day table with its `--calls` and
 * `--latency` figures), after the one Query of the app's days in the range that every view but
 * the users' reads, and the note per run of days the rollup has not computed.
 */
import { daysInRange } from "../../../shared/analytics/rollup";
import type { ActivityStore } from "../../../shared/analytics/store/activity-store";
import type { UserSetStore } from "../../../shared/analytics/user-sets";
import { dayView } from "./days";
import { groupsView } from "./groups";
import { onlineHeatmap } from "./heatmap";
import { hourlyView } from "./hourly";
import { notComputedNotes } from "./notes";
import type { ActivityViewOptions, ActivityViewResult } from "./options";
import { topListsView } from "./top-lists";
import { usersView } from "./users";

/**
 * `query activity`: an app's days in a range (one Query), or one day's hours or top groups/users
 * per day (one Query each), as `--json`, as the wide table's rows and as text lines that fit
 * `TERMINAL_COLUMNS` (the figures a person reads first; every one with `wide`). Every day says
 * when it was computed and whether it is final; a day the rollup has not computed yet is listed
 * as missing, and what to run is said.
 */
export async function activityView(
  store: ActivityStore,
  o: ActivityViewOptions,
  sets?: UserSetStore,
): Promise<ActivityViewResult> {
  if ((o.users || o.retention) && sets) return usersView(store, sets, o);
  const days = await store.days(o.app, o.from, o.to);
  const known = new Set(days.map((d) => d.day));
  const missing = daysInRange(o.from, o.to).filter((d) => !known.has(d));
  const notComputed = notComputedNotes(o.app, missing, o.targetArgs);
  if (o.groups && sets) return groupsView(store, days, sets, o, notComputed);
  if (o.heatmap)
    return onlineHeatmap(
      store,
      o,
      days.map((d) => d.day),
      notComputed,
    );
  if (o.hourly) return hourlyView(store, o, days, notComputed);
  if (o.top) return topListsView(store, o, days, notComputed);
  return dayView(o, days, missing, notComputed);
}
