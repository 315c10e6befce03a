/**
 * `--groups`: each day's group figures (the rollup's: created, deleted, with messages; members
 * joined, left, kicked, banned) beside the membership history's members at the start and end,
 * churn, groups and average size, which are `—` for a blank day, with its note.
 */
import type { Figures } from "../../../shared/analytics/figures";
import { daysInRange } from "../../../shared/analytics/rollup";
import type { ActivityStore, StoredDay } from "../../../shared/analytics/store/activity-store";
import { groupsOverTime, MEMBERS_PREFIX, type UserSetStore } from "../../../shared/analytics/user-sets";
import { blankDays, blankNotes, closedThroughOf, shownOr } from "./blank-days";
import type { ActivityViewOptions, ActivityViewResult, Row } from "./options";
import { BLANK, type Note, ratioText, type Section, textLines } from "./text";

/** `--groups`: each day's group figures (the rollup's), and the membership history's members, churn and sizes. */
const GROUP_COLUMNS = [
  "groups_created",
  "groups_deleted",
  "active_groups",
  "member_joins",
  "member_leaves",
  "member_kicks",
  "member_bans",
] as const satisfies ReadonlyArray<keyof Figures>;

/** `--groups`' rollup figures by their short names in the text that fits. */
const GROUP_SHORT: Record<(typeof GROUP_COLUMNS)[number], string> = {
  groups_created: "created",
  groups_deleted: "deleted",
  active_groups: "with_messages",
  member_joins: "joined",
  member_leaves: "left",
  member_kicks: "kicked",
  member_bans: "banned",
};

export async function groupsView(
  store: ActivityStore,
  days: readonly StoredDay[],
  sets: UserSetStore,
  o: ActivityViewOptions,
  notComputed: readonly Note[],
): Promise<ActivityViewResult> {
  const closedThrough = await closedThroughOf(sets);
  const history = await groupsOverTime(sets, o.app, o.from, o.to, closedThrough);
  const blanks = await blankDays(store, sets, MEMBERS_PREFIX, o, daysInRange(o.from, o.to));
  const blank = blanks.reasons;
  const figures = new Map(days.map((d) => [d.day, d.figures]));
  const figuresOf = (day: string) =>
    Object.fromEntries(GROUP_COLUMNS.map((f) => [f, figures.get(day)?.[f] ?? null]));
  // Today's group figures so far are the rollup's, in the same view: no other command to give.
  const notes = blankNotes(blanks, o, false);
  const json = {
    closedThrough: closedThrough || null,
    days: history.map((h) => {
      const reason = blank.get(h.day);
      const members = reason
        ? {
            membersAtStart: null,
            membersAtEnd: null,
            churned: null,
            churn: null,
            groups: null,
            averageGroupSize: null,
            blank: reason,
          }
        : {};
      return { ...h, ...members, ...figuresOf(h.day) };
    }),
    ...(notes.length ? { blank: notes } : {}),
  };
  const rows: Row[] = json.days.map((d) => {
    const b = "blank" in d;
    return {
      day: d.day,
      // A day the rollup has not computed for the app is `—` too, its note below.
      ...Object.fromEntries(
        Object.entries(figuresOf(d.day)).map(([f, v]) => [f, v ?? (b || !figures.has(d.day) ? BLANK : "")]),
      ),
      members_at_start: shownOr(b, d.membersAtStart),
      members_at_end: shownOr(b, d.membersAtEnd),
      churn: b ? BLANK : d.churn === null ? "" : d.churn.toFixed(3),
      groups: shownOr(b, d.groups),
      average_size: b ? BLANK : ratioText(d.averageGroupSize),
    };
  });
  const members = ["day", "members_at_start", "members_at_end", "churn", "groups", "average_size"];
  const sections: Section[] = o.wide
    ? [{ columns: Object.keys(rows[0] ?? { day: "" }), rows }]
    : [
        {
          title:
            "Groups created, deleted and with messages; members joined, left, kicked and banned (the rollup's figures of the day).",
          columns: ["day", ...GROUP_COLUMNS.map((f) => GROUP_SHORT[f])],
          rows: rows.map((r) => ({
            day: r.day,
            ...Object.fromEntries(GROUP_COLUMNS.map((f) => [GROUP_SHORT[f], r[f]])),
          })),
        },
        {
          title:
            "Members at the start and end of the day, churn, groups with members and their average size (the membership history of the closed days).",
          columns: members,
          rows,
        },
      ];
  return {
    json,
    rows,
    lines: textLines(
      sections,
      [...notComputed, ...notes.map((n) => ({ ...n, text: `${BLANK} ${n.text}` }))],
      o.wide,
    ),
  };
}
