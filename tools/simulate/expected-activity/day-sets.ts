/**
 * The day sets a history implies (`expectedDaySets`): each day's conversations with a message,
 * each member's last membership change and the groups deleted, fact by fact; and what a fact says
 * of them (`setFactOf`), shared with the groups over time.
 */
import type { DaySets, MemberChange } from "../../../shared/analytics/figures";
import { compareFacts, type FactOrder } from "../../../shared/projections/version";
import type { GeneratedEvent } from "../generator";
import { type Fact, factsOf, get, type Json, str } from "./facts";

const MEMBERSHIP: Partial<Record<string, boolean>> = {
  group_created: true,
  group_member_joined: true,
  group_member_added: true,
  group_member_scope_changed: true,
  group_member_left: false,
  group_member_kicked: false,
  group_member_banned: false,
};

/**
 * What a fact says of the day sets: the conversation of a message, the group of a group fact,
 * whether it deletes that group, and whether it puts the members it names in (true) or out.
 */
export function setFactOf({ trigger, data }: Fact) {
  const group = str(data, "group.guid");
  const member = group === undefined ? undefined : MEMBERSHIP[trigger];
  return {
    conversation: trigger === "message_sent" ? str(data, "message.conversationId") : undefined,
    group,
    deletes: group !== undefined && trigger === "group_deleted",
    member,
    uids: member === undefined ? [] : Object.keys((get(data, "members") as Json | undefined) ?? {}),
  };
}

/** A fact's place in the order of facts as the day query writes it (`order_key`): comparable as text. */
const orderKey = (o: FactOrder) =>
  `${String(o.eventTimeMs).padStart(15, "0")}${o.rank}${String(o.firstReceivedAt).padStart(15, "0")}${o.eventId}`;

/**
 * Each app's day sets per UTC day a history implies, fact by fact, independently of the day query:
 * the conversations with a message that day, each member's last membership change of the day (in
 * or out at its end, out at some time in it, when) and the groups deleted (when, the last time):
 * what a final pass must write (users: `expectedUsers`).
 */
export function expectedDaySets(
  events: readonly GeneratedEvent[],
  receivedAt: (e: GeneratedEvent) => number,
): Map<string, Map<string, Omit<DaySets, "users">>> {
  const result = new Map<string, Map<string, Omit<DaySets, "users">>>();
  for (const [appId, facts] of factsOf(events, receivedAt)) {
    const days = new Map<
      string,
      { conversations: Set<string>; members: Map<string, MemberChange>; deleted: Map<string, string> }
    >();
    for (const fact of [...facts].sort((a, b) => compareFacts(a.order, b.order))) {
      const d = days.get(fact.day) ?? { conversations: new Set(), members: new Map(), deleted: new Map() };
      days.set(fact.day, d);
      const { conversation, group, deletes, member, uids } = setFactOf(fact);
      if (conversation !== undefined) d.conversations.add(conversation);
      if (group === undefined) continue;
      if (deletes) d.deleted.set(group, orderKey(fact.order));
      if (member === undefined) continue;
      for (const uid of uids) {
        const key = `${group}\0${uid}`;
        const removed = (d.members.get(key)?.removed ?? false) || !member;
        d.members.set(key, { group, uid, member, removed, at: orderKey(fact.order) });
      }
    }
    const byDay = new Map<string, Omit<DaySets, "users">>();
    for (const [day, d] of days) {
      const byKey = (a: { group: string; uid?: string }, b: { group: string; uid?: string }) =>
        a.group < b.group ? -1 : a.group > b.group ? 1 : (a.uid ?? "") < (b.uid ?? "") ? -1 : 1;
      byDay.set(day, {
        conversations: [...d.conversations].sort(),
        members: [...d.members.values()].sort(byKey),
        deletions: [...d.deleted].map(([group, at]) => ({ group, at })).sort(byKey),
      });
    }
    result.set(appId, byDay);
  }
  return result;
}
