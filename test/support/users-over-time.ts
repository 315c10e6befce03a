import type { UsersDay, WeeklyCohort } from "../../shared/analytics/user-sets";

/*
 * Users over time as the SQL files answer them (`sql/users-over-time.sql`, `sql/weekly-cohorts.sql`):
 * what `usersOverTime` computes in TypeScript, row by row, for the tests that compare the two.
 */

/** `usersOverTime`'s days as `users-over-time.sql`'s rows (a retention not known yet is 0 there). */
export function usersOverTimeRows(days: readonly UsersDay[]) {
  return days.map((d) => ({
    day: d.day,
    dau: d.dau,
    wau: d.wau,
    mau: d.mau,
    new_users: d.newUsers,
    retained_d1: d.retainedD1 ?? 0,
    retained_d7: d.retainedD7 ?? 0,
    retained_d30: d.retainedD30 ?? 0,
    created_users: d.createdUsers,
    conversations_started: d.conversationsStarted,
  }));
}

/** `usersOverTime`'s weeks as `weekly-cohorts.sql`'s rows: one a week and week after. */
export function weeklyCohortRows(weeks: readonly WeeklyCohort[]) {
  return weeks.flatMap((w) =>
    w.active.map((active, k) => ({ week: w.week, users: w.users, week_after: k + 1, active })),
  );
}
