/**
 * The users a history implies: each app's active users per day (what the day sets of users over
 * time must hold) and when each user was created, as the facts' own entities say it.
 */
import type { GeneratedEvent } from "../generator";
import { add, bucket } from "./counts";
import { actorOf, factsOf, get, str } from "./facts";

/**
 * Each app's active users per UTC day a history implies (the users `active_users` counts: senders,
 * editors, reactors, readers, presence users, call parties, group owners …), computed fact by fact
 * as `expectedActivity` does: what the day sets of users over time must hold.
 *
 * @example expectedUsers(history.events, (e) => e.at).get("app1")?.get("2026-01-02") // Set { "app1-u3", … }
 */
export function expectedUsers(
  events: readonly GeneratedEvent[],
  receivedAt: (e: GeneratedEvent) => number,
): Map<string, Map<string, Set<string>>> {
  const result = new Map<string, Map<string, Set<string>>>();
  for (const [appId, facts] of factsOf(events, receivedAt)) {
    const days = new Map<string, Set<string>>();
    for (const fact of facts) {
      const b = bucket();
      add(b, fact);
      const users = days.get(fact.day) ?? new Set<string>();
      for (const uid of b.users) users.add(uid);
      days.set(fact.day, users);
    }
    result.set(appId, days);
  }
  return result;
}

/** The actor's own entity's `createdAt` (epoch s) in a fact, as the day query reads it. */
function actorCreatedAt(trigger: string, data: unknown): number | undefined {
  const at = (path: string) => {
    const v = get(data, path);
    return v === undefined || v === null ? undefined : Math.round(Number(v));
  };
  if (trigger === "user_connection_status_changed") return at("user.createdAt");
  if (trigger === "message_delivery_receipt" || trigger === "message_read_receipt")
    return at("body.user.createdAt");
  if (trigger === "message_reaction_added" || trigger === "message_reaction_removed")
    return at("reaction.reactedBy.createdAt");
  if (
    (trigger === "message_sent" || trigger === "user_mentioned") &&
    str(data, "message.data.entities.sender.entity.uid") === str(data, "message.sender")
  )
    return at("message.data.entities.sender.entity.createdAt");
  return undefined;
}

/**
 * When each user of each app was created, as the facts of a history say it (the actor's own
 * entity's `createdAt`, the earliest): what users over time counts as created on a day.
 */
export function expectedCreatedAt(
  events: readonly GeneratedEvent[],
  receivedAt: (e: GeneratedEvent) => number,
): Map<string, Map<string, number>> {
  const result = new Map<string, Map<string, number>>();
  for (const [appId, facts] of factsOf(events, receivedAt)) {
    const created = new Map<string, number>();
    for (const { trigger, data } of facts) {
      const uid = actorOf(trigger, data);
      const at = actorCreatedAt(trigger, data);
      if (uid !== undefined && at !== undefined) created.set(uid, Math.min(created.get(uid) ?? at, at));
    }
    result.set(appId, created);
  }
  return result;
}
