/**
 * The day sets (users over time, conversations started, the membership history): what a final
 * pass writes of each closed day and what the views read back. This file is their public face,
 * what the rollup, the handler, the views and the tests import; each step lives in a file of its
 * own: the objects' keys (`layout.ts`, with the sets' description), their bytes (`codec.ts`),
 * where they are kept and which days have them (`store.ts`), their writing (`write.ts`), and their
 * reading as users over time (`users-over-time.ts`) and groups over time (`groups-over-time.ts`).
 * What the steps share among themselves only (`read`, `writeFirstSeen`) is not exported here.
 */
export {
  type DayConversations,
  type DayMembers,
  type DayUsers,
  decodeConversations,
  decodeMembers,
  decodeUsers,
  encodeConversations,
  encodeMembers,
  encodeUsers,
} from "./codec";
export { type GroupsDay, groupsOverTime } from "./groups-over-time";
export {
  CONVERSATIONS_PREFIX,
  conversationsKey,
  FIRST_SEEN_PREFIX,
  firstSeenKey,
  MEMBERS_PREFIX,
  membersKey,
  USER_SETS_PREFIX,
  userSetKey,
} from "./layout";
export { daySetDays, hasDaySets, s3UserSets, type UserSetStore } from "./store";
export { type UsersDay, usersOverTime, type WeeklyCohort } from "./users-over-time";
// Every export of write.ts is public (what the steps share stays in store.ts and layout.ts).
export * from "./write";
