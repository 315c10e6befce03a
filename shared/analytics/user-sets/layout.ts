/**
 * Users over time (#33): each closed day's active users per app (its user set, from the day
 * query's `(app, uid)` rows: `active_users` is their count) and the users first seen that day,
 * written once when the day closes (a final pass), so that WAU, MAU and retention read a month
 * of small sets, never a month of events. Within the archive's retention: a user active only
 * before the first closed day the sets hold is "first seen" on their first day in the sets.
 *
 * - `users/date=<day>/users.ndjson.gz`: a line `{"app","uid"}` per active user of each app;
 * - `users/first-seen/date=<day>/users.ndjson.gz`: the same for the users seen that day and on no
 *   earlier day (kept exact whatever order days close in: a day closed late takes its users'
 *   first sightings back from the later days);
 * - `users/conversations/first-seen/date=<day>/conversations.ndjson.gz`: a line
 *   `{"app","conversation"}` per conversation whose first message is that day (conversations
 *   started), kept exact the same way;
 * - `users/members/date=<day>/members.ndjson.gz`: the membership history a day at a time, a line
 *   `{"app","group","uid","member","removed","at"}` per member whose membership changed that day
 *   (their last change: in or out at the end of the day, out at some time in it, when), and
 *   `{"app","group","deleted"}` per group deleted (when), so that the members of every group at
 *   the start of any day are a fold of the days before it (`groupsOverTime`).
 *
 * The users an import brought (`imports/users/`, `contracts/import-records.ts`; #43) are read
 * beside the sets: they exist from their `createdAt`, so they count as created that day and are
 * never new on a later first action (`usersOverTime`); the sets themselves are what webhooks said.
 */
import { DAY_SET_TABLES } from "../dialect";

export const USER_SETS_PREFIX = DAY_SET_TABLES.day_users.prefix;
export const FIRST_SEEN_PREFIX = DAY_SET_TABLES.first_seen_users.prefix;
export const CONVERSATIONS_PREFIX = DAY_SET_TABLES.conversations_started.prefix;
export const MEMBERS_PREFIX = DAY_SET_TABLES.membership_changes.prefix;

/** @example userSetKey("2026-01-02") // "users/date=2026-01-02/users.ndjson.gz" */
export function userSetKey(day: string): string {
  return `${USER_SETS_PREFIX}${day}/users.ndjson.gz`;
}

/** @example firstSeenKey("2026-01-02") // "users/first-seen/date=2026-01-02/users.ndjson.gz" */
export function firstSeenKey(day: string): string {
  return `${FIRST_SEEN_PREFIX}${day}/users.ndjson.gz`;
}

/** @example conversationsKey("2026-01-02") // "users/conversations/first-seen/date=2026-01-02/conversations.ndjson.gz" */
export function conversationsKey(day: string): string {
  return `${CONVERSATIONS_PREFIX}${day}/conversations.ndjson.gz`;
}

/** @example membersKey("2026-01-02") // "users/members/date=2026-01-02/members.ndjson.gz" */
export function membersKey(day: string): string {
  return `${MEMBERS_PREFIX}${day}/members.ndjson.gz`;
}
