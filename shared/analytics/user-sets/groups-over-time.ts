/**
 * The day sets read as an app's groups over time (`groupsOverTime`): members at the start and end
 * of each day, churn and average group size, by folding the membership history a day at a time.
 */
import pLimit from "p-limit";
import { addDays, dayOfKey } from "../../contracts/bucket-layout";
import { decodeMembers } from "./codec";
import { MEMBERS_PREFIX, membersKey } from "./layout";
import { read, type UserSetStore } from "./store";

/** One day of an app's groups, from the membership history. Null: the day is not closed yet. */
export interface GroupsDay {
  day: string;
  /** Memberships (a member in a group) at the start of the day, and at its end. */
  membersAtStart: number | null;
  membersAtEnd: number | null;
  /** Members at the start of the day who left, were kicked or were banned in it (a group deleted is not churn). */
  churned: number | null;
  /** churned / membersAtStart. */
  churn: number | null;
  /** Groups with at least one member at the end of the day. */
  groups: number | null;
  /** membersAtEnd / groups. */
  averageGroupSize: number | null;
}

/**
 * An app's groups over the days from `from` to `to`: members at the start and end of each day,
 * churn and average group size, by folding the membership history (each closed day's members
 * object, from the first) up to each day: exact within the archive's retention (a membership
 * older than the first closed day is not known). Reads one object per closed day up to `to`, 16 at once.
 */
export async function groupsOverTime(
  store: UserSetStore,
  app: string,
  from: string,
  to: string,
  closedThrough: string,
): Promise<GroupsDay[]> {
  const days = (await store.list(MEMBERS_PREFIX))
    .flatMap((key) => dayOfKey(key) ?? [])
    .filter((d) => d <= to)
    .sort();
  /** group → uid → in (true) or out, after the days folded so far. */
  const members = new Map<string, Map<string, boolean>>();
  const inGroups = () => [...members.values()].map((m) => [...m.values()].filter(Boolean).length);
  const out = new Map<string, GroupsDay>();
  // Read 16 at a time (the app's lines kept), then folded in order.
  const limit = pLimit(16);
  const history = await Promise.all(
    days.map((day) => limit(async () => (await read(store, membersKey(day), decodeMembers))?.get(app))),
  );
  for (const [i, day] of days.entries()) {
    const changes = history[i];
    const shown = day >= from && day <= closedThrough;
    const start = inGroups().reduce((a, b) => a + b, 0);
    // Churned: in a group at the start of the day, and out of it at some time in the day.
    const churned = (changes?.members ?? []).filter(
      (c) => c.removed && members.get(c.group)?.get(c.uid),
    ).length;
    const events = [
      ...(changes?.deletions ?? []).map((d) => ({ at: d.at, apply: () => members.delete(d.group) })),
      ...(changes?.members ?? []).map((c) => ({
        at: c.at,
        apply: () =>
          members.set(c.group, (members.get(c.group) ?? new Map<string, boolean>()).set(c.uid, c.member)),
      })),
    ].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    for (const e of events) e.apply();
    if (!shown) continue;
    const sizes = inGroups().filter((n) => n > 0);
    const end = sizes.reduce((a, b) => a + b, 0);
    out.set(day, {
      day,
      membersAtStart: start,
      membersAtEnd: end,
      churned,
      churn: start ? churned / start : null,
      groups: sizes.length,
      averageGroupSize: sizes.length ? end / sizes.length : null,
    });
  }
  const unknown = { membersAtStart: null, membersAtEnd: null, churned: null, churn: null, groups: null };
  const result: GroupsDay[] = [];
  for (let day = from; day <= to; day = addDays(day, 1))
    result.push(out.get(day) ?? { day, ...unknown, averageGroupSize: null });
  return result;
}
