/**
 * `--users` and `--retention`: users over time from the closed days' user sets (DAU, WAU, MAU,
 * stickiness, new and created users, conversations started), and new users' D+1, D+7, D+30
 * returns and weekly cohorts; a figure whose day (or a day it reads) is blank is `—`, with its note.
 */
import { importedUsersOf } from "../../../shared/adapters/import-records";
import { daysInRange } from "../../../shared/analytics/rollup";
import type { ActivityStore } from "../../../shared/analytics/store/activity-store";
import {
  USER_SETS_PREFIX,
  type UserSetStore,
  type UsersDay,
  usersOverTime,
} from "../../../shared/analytics/user-sets";
import { addDays } from "../../../shared/contracts/bucket-layout";
import { type BlankReason, blankDays, blankNotes, closedThroughOf, shownOr } from "./blank-days";
import { type ActivityViewOptions, type ActivityViewResult, DEFAULT_GRACE_MINUTES } from "./options";
import { BLANK, textLines } from "./text";

/** A `UsersDay` with every figure null (blank), marked with why. */
function blanked(d: UsersDay, reason: BlankReason): UsersDay & { blank: BlankReason } {
  const nulls = Object.fromEntries(Object.keys(d).map((k) => [k, null]));
  return { ...(nulls as unknown as UsersDay), day: d.day, blank: reason };
}

const share = (n: number | null, of: number | null) =>
  n === null || of === null ? BLANK : of ? (n / of).toFixed(2) : "";

/**
 * `--users` / `--retention`: users over time from the closed days' user sets (the last closed day:
 * the newest set). A day not closed yet, or closed but without its sets written for the app, is
 * blank (null; `—` in text) with a note saying when it closes and what to run; so is a D+k
 * return whose day is blank, and a weekly cohort whose week (or week after) has a blank day.
 */
export async function usersView(
  store: ActivityStore,
  sets: UserSetStore,
  o: ActivityViewOptions,
): Promise<ActivityViewResult> {
  const closedThrough = await closedThroughOf(sets);
  const imported = await importedUsersOf(sets, o.app);
  const computed = await usersOverTime(sets, o.app, o.from, o.to, closedThrough, imported);
  // Every day a figure of the range reads: from the Monday of the first week (its cohort) to
  // D+30 of the last day and the 4 weeks after the last week.
  const monday = addDays(o.from, -((new Date(`${o.from}T00:00:00Z`).getUTCDay() + 6) % 7));
  const reach = daysInRange(monday, addDays(o.to, 34));
  const blanks = await blankDays(store, sets, USER_SETS_PREFIX, o, reach);
  const blank = blanks.reasons;
  // A return or a cohort waits for a day not closed or without its sets, not for one before the archive.
  const isBlank = (day: string) => blank.get(day) === "not closed" || blank.get(day) === "not written";
  const days = computed.days.map((d) => {
    const reason = blank.get(d.day);
    // Before the archive nothing of the day is known but, for an app that imported its users
    // (#43), who was created then: the import says when each existed from.
    if (reason === "before the archive" && imported.size > 0)
      return { ...blanked(d, reason), createdUsers: d.createdUsers };
    if (reason) return blanked(d, reason);
    const back = (k: number, v: number | null) => (isBlank(addDays(d.day, k)) ? null : v);
    return {
      ...d,
      retainedD1: back(1, d.retainedD1),
      retainedD7: back(7, d.retainedD7),
      retainedD30: back(30, d.retainedD30),
    };
  });
  const weekBlank = (start: string) => daysInRange(start, addDays(start, 6)).some(isBlank);
  const weeks = computed.weeks.map((w) => ({
    week: w.week,
    users: weekBlank(w.week) ? null : w.users,
    active: w.active.map((a, k) => (weekBlank(addDays(w.week, 7 * (k + 1))) ? null : a)),
  }));
  const notes = blankNotes(blanks, o);
  const json = {
    closedThrough: closedThrough || null,
    days,
    weeks,
    ...(notes.length ? { blank: notes } : {}),
  };
  const explain = [
    ...notes.map((n) => ({ ...n, text: `${BLANK} ${n.text}` })),
    ...(o.retention && reach.some(isBlank)
      ? [
          {
            text: `${BLANK} in d1, d7, d30, w1…w4 and a week's new_users: a day it reads (the cohort's day + 1, 7 or 30; a day of the week) is not closed yet, or its sets are not written; a day closes at its end plus the ${o.graceMinutes ?? DEFAULT_GRACE_MINUTES}-minute grace period, UTC.`,
          },
        ]
      : []),
  ];
  if (o.retention) {
    const rows = [
      ...days.map((d) => {
        const b = "blank" in d;
        return {
          cohort: d.day,
          new_users: shownOr(b, d.newUsers),
          d1: b ? BLANK : share(d.retainedD1, d.newUsers),
          d7: b ? BLANK : share(d.retainedD7, d.newUsers),
          d30: b ? BLANK : share(d.retainedD30, d.newUsers),
        };
      }),
      ...weeks.map((w) => ({
        cohort: `week of ${w.week}`,
        new_users: w.users ?? BLANK,
        ...Object.fromEntries(w.active.map((a, i) => [`w${i + 1}`, share(a, w.users)])),
      })),
    ];
    const columns = ["cohort", "new_users", "d1", "d7", "d30", "w1", "w2", "w3", "w4"];
    return { json, rows, lines: textLines([{ columns, rows }], explain, o.wide) };
  }
  const rows = days.map((d) => {
    const b = "blank" in d;
    return {
      day: d.day,
      dau: shownOr(b, d.dau),
      wau: shownOr(b, d.wau),
      mau: shownOr(b, d.mau),
      stickiness: b ? BLANK : d.stickiness === null ? "" : d.stickiness.toFixed(2),
      new_users: shownOr(b, d.newUsers),
      created_users: shownOr(b && d.createdUsers === null, d.createdUsers),
      conversations_started: shownOr(b, d.conversationsStarted),
    };
  });
  return {
    json,
    rows,
    lines: textLines([{ columns: Object.keys(rows[0] ?? { day: "" }), rows }], explain, o.wide),
  };
}
