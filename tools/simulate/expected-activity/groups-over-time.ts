/**
 * The groups over time a history implies (`expectedGroupsOverTime`): its membership facts replayed
 * in order across the whole history, members at each day's start and end, churn, groups with
 * members; and each conversation's first day.
 */
import { compareFacts } from "../../../shared/projections/version";
import type { GeneratedEvent } from "../generator";
import { setFactOf } from "./day-sets";
import { factsOf } from "./facts";

/**
 * Each app's groups per UTC day a history implies, by replaying its membership facts in order
 * across the whole history (not a day at a time, as the day sets are): members at the start and
 * end of each day, the members at its start who were out at some time in it, the groups with
 * members at its end; and each conversation's first day (conversations started).
 */
export function expectedGroupsOverTime(
  events: readonly GeneratedEvent[],
  receivedAt: (e: GeneratedEvent) => number,
): Map<
  string,
  {
    days: Map<string, { membersAtStart: number; membersAtEnd: number; churned: number; groups: number }>;
    conversationsStarted: Map<string, number>;
  }
> {
  const result = new Map<
    string,
    ReturnType<typeof expectedGroupsOverTime> extends Map<string, infer V> ? V : never
  >();
  for (const [appId, facts] of factsOf(events, receivedAt)) {
    const ordered = [...facts].sort((a, b) => compareFacts(a.order, b.order));
    const members = new Set<string>();
    const days = new Map<
      string,
      { membersAtStart: number; membersAtEnd: number; churned: number; groups: number }
    >();
    const firstDay = new Map<string, string>();
    let day = "";
    let atStart = new Set<string>();
    let churned = new Set<string>();
    const closeDay = () => {
      if (!day) return;
      const groups = new Set([...members].map((k) => k.split("\0")[0]));
      days.set(day, {
        membersAtStart: atStart.size,
        membersAtEnd: members.size,
        churned: churned.size,
        groups: groups.size,
      });
    };
    for (const fact of ordered) {
      if (fact.day !== day) {
        closeDay();
        day = fact.day;
        atStart = new Set(members);
        churned = new Set();
      }
      const { conversation, group, deletes, member, uids } = setFactOf(fact);
      if (conversation !== undefined && !firstDay.has(conversation)) firstDay.set(conversation, fact.day);
      if (group === undefined) continue;
      if (deletes) for (const k of [...members]) if (k.startsWith(`${group}\0`)) members.delete(k);
      if (member === undefined) continue;
      for (const uid of uids) {
        const k = `${group}\0${uid}`;
        if (member) members.add(k);
        else {
          if (atStart.has(k)) churned.add(k);
          members.delete(k);
        }
      }
    }
    closeDay();
    const conversationsStarted = new Map<string, number>();
    for (const d of firstDay.values()) conversationsStarted.set(d, (conversationsStarted.get(d) ?? 0) + 1);
    result.set(appId, { days, conversationsStarted });
  }
  return result;
}
