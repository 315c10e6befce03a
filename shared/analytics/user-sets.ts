import { gzipSync } from "node:zlib";
import type { S3Client } from "@aws-sdk/client-s3";
import pLimit from "p-limit";
import { importedUsersOf } from "../adapters/import-records";
import { s3BlobStore } from "../adapters/s3-blob-store";
import { listObjects } from "../adapters/s3-listing";
import { addDays, dayOfKey, objectText } from "../contracts/bucket-layout";
import { existsFrom, type ImportedUser } from "../contracts/import-records";
import { isMissingObject } from "../platform/errors";
import type { BlobStore } from "../ports/blob-store";
import { DAY_SET_TABLES } from "./dialect";
import type { ActiveUser, DaySets, GroupDeletion, MemberChange } from "./figures";

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

/** Every app's users of a day: app → its users by uid, with when their entity says they were created. */
export type DayUsers = Map<string, ActiveUser[]>;

const gzipLines = (lines: readonly string[]) => gzipSync(lines.length ? `${lines.join("\n")}\n` : "");

/** Every app's membership changes of a day (`MemberChange`, `GroupDeletion`). */
export type DayMembers = Map<string, { members: MemberChange[]; deletions: GroupDeletion[] }>;

/** The lines of a membership-history object. */
export function encodeMembers(members: DayMembers): Uint8Array {
  return gzipLines(
    [...members.keys()].sort().flatMap((app) => {
      const { members: changes = [], deletions = [] } = members.get(app) ?? {};
      return [
        ...changes.map((c) => JSON.stringify({ app, ...c })),
        ...deletions.map((d) => JSON.stringify({ app, group: d.group, deleted: d.at })),
      ];
    }),
  );
}

/** A membership-history object's changes and deletions, per app. */
export function decodeMembers(bytes: Uint8Array): DayMembers {
  const out: DayMembers = new Map();
  for (const line of objectText(bytes).split("\n")) {
    if (!line.trim()) continue;
    const { app, deleted, ...change } = JSON.parse(line) as MemberChange & { app: string; deleted?: string };
    const entry = out.get(app) ?? { members: [], deletions: [] };
    if (deleted !== undefined) entry.deletions.push({ group: change.group, at: deleted });
    else entry.members.push(change);
    out.set(app, entry);
  }
  return out;
}

/** The lines of a set object: `{"app","uid"}`, and `"createdAt"` (epoch s) when a fact gave it. */
export function encodeUsers(users: DayUsers): Uint8Array {
  return gzipLines(
    [...users.keys()]
      .sort()
      .flatMap((app) => (users.get(app) ?? []).map((u) => JSON.stringify({ app, ...u }))),
  );
}

const byUid = (a: ActiveUser, b: ActiveUser) => (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0);

/** A set object's users. */
export function decodeUsers(bytes: Uint8Array): DayUsers {
  const users: DayUsers = new Map();
  for (const line of objectText(bytes).split("\n")) {
    if (!line.trim()) continue;
    const { app, uid, createdAt } = JSON.parse(line) as { app: string; uid: string; createdAt?: number };
    users.set(app, [...(users.get(app) ?? []), { uid, ...(createdAt === undefined ? {} : { createdAt }) }]);
  }
  for (const list of users.values()) list.sort(byUid);
  return users;
}

/** Where the sets are kept: the data bucket, through its blob store and a listing of a prefix. */
export interface UserSetStore {
  blobs: BlobStore;
  /** The keys under a prefix. */
  list(prefix: string): Promise<string[]>;
}

/** The sets in the data bucket. */
export function s3UserSets(s3: S3Client, bucket: string): UserSetStore {
  return {
    blobs: s3BlobStore(s3, bucket),
    list: async (prefix) => (await listObjects(s3, bucket, prefix)).map((o) => o.key),
  };
}

/** Every app's conversations of a day that had a message (conversation ids). */
export type DayConversations = Map<string, string[]>;

/** The lines of a conversations object: `{"app","conversation"}`. */
export function encodeConversations(conversations: DayConversations): Uint8Array {
  return gzipLines(
    [...conversations.keys()]
      .sort()
      .flatMap((app) =>
        (conversations.get(app) ?? []).map((conversation) => JSON.stringify({ app, conversation })),
      ),
  );
}

/** A conversations object's ids, per app. */
export function decodeConversations(bytes: Uint8Array): DayConversations {
  const out: DayConversations = new Map();
  for (const line of objectText(bytes).split("\n")) {
    if (!line.trim()) continue;
    const { app, conversation } = JSON.parse(line) as { app: string; conversation: string };
    out.set(app, [...(out.get(app) ?? []), conversation]);
  }
  for (const list of out.values()) list.sort();
  return out;
}

/** A kind of first sighting: where its day objects are, how they are written, what identifies an entry. */
interface FirstSeenKind<T> {
  prefix: string;
  key(day: string): string;
  encode(entries: Map<string, T[]>): Uint8Array;
  decode(bytes: Uint8Array): Map<string, T[]>;
  id(entry: T): string;
}

const FIRST_SEEN_USERS: FirstSeenKind<ActiveUser> = {
  prefix: FIRST_SEEN_PREFIX,
  key: firstSeenKey,
  encode: encodeUsers,
  decode: decodeUsers,
  id: (u) => u.uid,
};

const CONVERSATIONS_STARTED: FirstSeenKind<string> = {
  prefix: CONVERSATIONS_PREFIX,
  key: conversationsKey,
  encode: encodeConversations,
  decode: decodeConversations,
  id: (c) => c,
};

async function read<T>(
  store: UserSetStore,
  key: string,
  decode: (bytes: Uint8Array) => T,
): Promise<T | undefined> {
  try {
    return decode(await store.blobs.getBytes(key));
  } catch (error) {
    if (isMissingObject(error)) return undefined;
    throw error;
  }
}

/**
 * Writes a closed day's first sightings: its entries seen on no earlier day's first-sightings
 * object; a later day's object that holds one of them (a day closed out of order) is rewritten
 * without them. Reads every first-sightings object of the kind (each entry once: the app's base).
 * With `only`, `entries` are that app's alone: the day's object keeps every other app's entries.
 */
async function writeFirstSeen<T>(
  store: UserSetStore,
  kind: FirstSeenKind<T>,
  day: string,
  entries: Map<string, T[]>,
  only?: string,
): Promise<void> {
  // Only the day's own entries are looked for in the earlier days: memory follows the day, not
  // every entry ever seen.
  const ofDay = new Set([...entries].flatMap(([app, list]) => list.map((e) => `${app}\0${kind.id(e)}`)));
  const seenBefore = new Set<string>();
  const later: Array<{ day: string; entries: Map<string, T[]> }> = [];
  // 16 objects read at once, each reduced to what it tells about the day as it comes.
  const limit = pLimit(16);
  await Promise.all(
    (await store.list(kind.prefix)).map((key) =>
      limit(async () => {
        const d = dayOfKey(key);
        if (!d || d === day) return;
        const set = await read(store, key, kind.decode);
        if (!set) return;
        if (d < day)
          for (const [app, list] of set)
            for (const e of list) {
              const k = `${app}\0${kind.id(e)}`;
              if (ofDay.has(k)) seenBefore.add(k);
            }
        else later.push({ day: d, entries: set });
      }),
    ),
  );
  const first = new Map<string, T[]>();
  for (const [app, list] of entries) {
    const fresh = list.filter((e) => !seenBefore.has(`${app}\0${kind.id(e)}`));
    if (fresh.length) first.set(app, fresh);
  }
  const others =
    only === undefined
      ? []
      : [...((await read(store, kind.key(day), kind.decode)) ?? [])].filter(([a]) => a !== only);
  await store.blobs.put(kind.key(day), kind.encode(new Map([...others, ...first])), {
    contentType: "application/gzip",
  });
  for (const l of later) {
    let changed = false;
    for (const [app, list] of l.entries) {
      const mine = new Set((first.get(app) ?? []).map(kind.id));
      const kept = list.filter((e) => !mine.has(kind.id(e)));
      if (kept.length !== list.length) {
        changed = true;
        if (kept.length) l.entries.set(app, kept);
        else l.entries.delete(app);
      }
    }
    if (changed)
      await store.blobs.put(kind.key(l.day), kind.encode(l.entries), { contentType: "application/gzip" });
  }
}

/**
 * Writes a closed day's user set, and its first sightings (`writeFirstSeen`).
 *
 * @example await writeDayUsers(store, "2026-01-02", new Map([["app1", [{ uid: "u1" }, { uid: "u2" }]]]))
 */
export async function writeDayUsers(store: UserSetStore, day: string, users: DayUsers): Promise<void> {
  await store.blobs.put(userSetKey(day), encodeUsers(users), { contentType: "application/gzip" });
  await writeFirstSeen(store, FIRST_SEEN_USERS, day, users);
}

/**
 * Writes every set of a closed day (a final pass): its users and their first sightings, the
 * conversations started, and the membership history (each object once, even when empty: a closed
 * day's object says "nothing changed", a missing one "not closed").
 */
export async function writeDaySets(
  store: UserSetStore,
  day: string,
  sets: Map<string, DaySets>,
): Promise<void> {
  const pick = <T>(f: (s: DaySets) => T[]) =>
    new Map([...sets].map(([app, s]) => [app, f(s)] as const).filter(([, list]) => list.length > 0));
  await writeDayUsers(
    store,
    day,
    pick((s) => s.users),
  );
  await writeFirstSeen(
    store,
    CONVERSATIONS_STARTED,
    day,
    pick((s) => s.conversations),
  );
  const members: DayMembers = new Map(
    [...sets]
      .filter(([, s]) => s.members.length + s.deletions.length > 0)
      .map(([app, s]) => [app, { members: s.members, deletions: s.deletions }]),
  );
  await store.blobs.put(membersKey(day), encodeMembers(members), { contentType: "application/gzip" });
}

/**
 * Whether a day's sets exist: a final pass closed it (every app's sets are written at once, so a
 * day either has every app's or none). One LIST.
 *
 * @example await hasDaySets(store, "2026-01-02") // true
 */
export async function hasDaySets(store: UserSetStore, day: string): Promise<boolean> {
  return (await store.list(userSetKey(day))).includes(userSetKey(day));
}

/**
 * The closed days (those with sets), sorted: what `usersOverTime` counts on, and what a reader
 * names when a figure is blank. One LIST per 1,000 days.
 *
 * @example await daySetDays(store) // ["2026-01-01", "2026-01-02"]
 */
export async function daySetDays(store: UserSetStore): Promise<string[]> {
  return (await store.list(USER_SETS_PREFIX)).flatMap((key) => dayOfKey(key) ?? []).sort();
}

/** `map` with `app`'s entry replaced by `entry`, or without it when `entry` is undefined. */
function withEntry<T>(map: Map<string, T>, app: string, entry: T | undefined): Map<string, T> {
  const out = new Map([...map].filter(([a]) => a !== app));
  if (entry !== undefined) out.set(app, entry);
  return out;
}

/**
 * Merges one app's sets of a closed day into the day's objects (a one-app pass, `rollupDay`): the
 * app's lines of each object replaced by `sets`, every other app's kept; its first sightings
 * taken as `writeDaySets` takes them (and taken back from later days). The day's sets must exist
 * (`hasDaySets`): a day without them is closed for every app at once (`writeDaySets`). A
 * read-modify-write of objects every app shares: the caller holds the archive lease.
 *
 * @example await mergeAppDaySets(store, "2026-01-02", "app1", { users: [{ uid: "u1" }], conversations: [], members: [], deletions: [] })
 */
export async function mergeAppDaySets(
  store: UserSetStore,
  day: string,
  app: string,
  sets: DaySets,
): Promise<void> {
  const gz = { contentType: "application/gzip" };
  const users = (await read(store, userSetKey(day), decodeUsers)) ?? new Map();
  const ofApp = <T>(list: T[]) => (list.length ? list : undefined);
  await store.blobs.put(userSetKey(day), encodeUsers(withEntry(users, app, ofApp(sets.users))), gz);
  const one = <T>(list: T[]) => new Map(list.length ? [[app, list]] : []);
  await writeFirstSeen(store, FIRST_SEEN_USERS, day, one(sets.users), app);
  await writeFirstSeen(store, CONVERSATIONS_STARTED, day, one(sets.conversations), app);
  const members = (await read(store, membersKey(day), decodeMembers)) ?? new Map();
  const changes = sets.members.length + sets.deletions.length > 0;
  await store.blobs.put(
    membersKey(day),
    encodeMembers(
      withEntry(members, app, changes ? { members: sets.members, deletions: sets.deletions } : undefined),
    ),
    gz,
  );
}

/** One day of an app's users over time. Null: the day, or a day its window reaches, is not closed. */
export interface UsersDay {
  day: string;
  /** Distinct users active that day (the day's `active_users`); null until the day is closed. */
  dau: number | null;
  /** Distinct users active in the 7 (30) days ending that day, each once: not a sum of days. */
  wau: number | null;
  mau: number | null;
  /** dau / mau. */
  stickiness: number | null;
  /**
   * Users first seen that day (in any role: no event announces a registration), but for imported
   * users who existed before it (#43: an imported user exists from their `createdAt`, not from
   * their first action); null until closed.
   */
  newUsers: number | null;
  /**
   * Users created that day: whose entity says so (`createdAt`, where a payload carries it), among
   * the users active within 30 days before or after the range, and every user imported as created
   * that day (their `createdAt`, else the day the platform confirmed them), active or not; the
   * earliest said counts. Null until closed.
   */
  createdUsers: number | null;
  /** Of those first seen, how many were active again 1, 7 and 30 days later (null: that day is not closed yet). */
  retainedD1: number | null;
  retainedD7: number | null;
  retainedD30: number | null;
  /** Conversations whose first message (in the archive) was that day; null until closed. */
  conversationsStarted: number | null;
}

/** A weekly cohort: the users first seen in a week (Monday first, UTC), and how many were active in each of the 4 weeks after. */
export interface WeeklyCohort {
  week: string;
  users: number;
  /** Active in week +1 … +4 (null: that week is not over in the sets yet). */
  active: Array<number | null>;
}

/**
 * An app's users over time for the days from `from` to `to`: DAU, WAU, MAU, stickiness, new users
 * and their D+1, D+7, D+30 retention, and the weekly cohorts of the weeks starting in the range,
 * as exact set operations over the closed days' sets (reads at most 30 days before `from` and 30
 * after `to`, one GET each, and every import record object: `importedUsersOf`, unless the caller
 * read them, `importedUsers`). `closedThrough`
 * is the last closed day: a window past it is null. A
 * day after the first closed one without its sets was never closed (its final pass deferred,
 * failed or never run): it, and every window that reaches it, is null, never a count that leaves
 * its users out (`daySetDays` names the days closed). A day before the first closed one is before
 * the history the sets hold: it counts as no one.
 */
export async function usersOverTime(
  store: UserSetStore,
  app: string,
  from: string,
  to: string,
  closedThrough: string,
  importedUsers?: ReadonlyMap<string, ImportedUser>,
): Promise<{ days: UsersDay[]; weeks: WeeklyCohort[] }> {
  const closedDays = await daySetDays(store);
  const firstClosed = closedDays[0] ?? "";
  const closedSet = new Set(closedDays);
  /** Whether a day's sets are known: closed, or before the first closed day (nothing then). */
  const known = (day: string) => day <= closedThrough && (day < firstClosed || closedSet.has(day));
  /** Whether every day of the `n` ending with `last` is known. */
  const knownWindow = (last: string, n: number) =>
    Array.from({ length: n }, (_, i) => addDays(last, -i)).every(known);
  const cache = new Map<string, Set<string>>();
  /** When each user read so far was created, by their entities (the earliest said). */
  const created = new Map<string, number>();
  const setOf = async (day: string, first = false): Promise<Set<string>> => {
    const key = first ? firstSeenKey(day) : userSetKey(day);
    let set = cache.get(key);
    if (!set) {
      const list = (await read(store, key, decodeUsers))?.get(app) ?? [];
      for (const u of list)
        if (u.createdAt !== undefined)
          created.set(u.uid, Math.min(created.get(u.uid) ?? u.createdAt, u.createdAt));
      set = new Set(list.map((u) => u.uid));
      cache.set(key, set);
    }
    return set;
  };
  // Every closed day from 30 before the range to 30 after it: who was created when, as far as seen.
  for (let day = addDays(from, -29); day <= addDays(to, 30) && day <= closedThrough; day = addDays(day, 1))
    await setOf(day);
  // The imported users (#43): each exists from their `createdAt` (else the day the platform
  // confirmed them), active or not; created then, and never new on a later first action.
  const imported = importedUsers ?? (await importedUsersOf(store, app));
  for (const user of imported.values()) {
    const at = user.createdAt ?? user.importedAt;
    created.set(user.uid, Math.min(created.get(user.uid) ?? at, at));
  }
  /** The users first seen on a day, but for those imported as existing before it. */
  const newOn = async (day: string) =>
    new Set(
      [...(await setOf(day, true))].filter((uid) => {
        const user = imported.get(uid);
        return user === undefined || existsFrom(user) >= day;
      }),
    );
  const createdOn = (day: string) =>
    [...created.values()].filter((at) => new Date(at * 1000).toISOString().slice(0, 10) === day).length;
  const union = async (last: string, n: number) => {
    const all = new Set<string>();
    for (let i = 0; i < n; i++) for (const uid of await setOf(addDays(last, -i))) all.add(uid);
    return all;
  };
  const retained = async (cohort: Set<string> | null, day: string) => {
    if (cohort === null || !known(day)) return null;
    const active = await setOf(day);
    return [...cohort].filter((uid) => active.has(uid)).length;
  };
  const days: UsersDay[] = [];
  for (let day = from; day <= to; day = addDays(day, 1)) {
    const closed = known(day);
    const dau = closed ? (await setOf(day)).size : null;
    const wau = knownWindow(day, 7) ? (await union(day, 7)).size : null;
    const mau = knownWindow(day, 30) ? (await union(day, 30)).size : null;
    const cohort = closed ? await newOn(day) : null;
    days.push({
      day,
      dau,
      wau,
      mau,
      stickiness: mau && dau !== null ? dau / mau : null,
      newUsers: cohort?.size ?? null,
      createdUsers: closed ? createdOn(day) : null,
      retainedD1: await retained(cohort, addDays(day, 1)),
      retainedD7: await retained(cohort, addDays(day, 7)),
      retainedD30: await retained(cohort, addDays(day, 30)),
      conversationsStarted: closed
        ? ((await read(store, conversationsKey(day), decodeConversations))?.get(app)?.length ?? 0)
        : null,
    });
  }
  const weeks: WeeklyCohort[] = [];
  const monday = (day: string) => addDays(day, -((new Date(`${day}T00:00:00Z`).getUTCDay() + 6) % 7));
  for (let week = monday(from); week <= to; week = addDays(week, 7)) {
    const cohort = new Set<string>();
    for (let i = 0; i < 7; i++) for (const uid of await newOn(addDays(week, i))) cohort.add(uid);
    const active: Array<number | null> = [];
    for (let k = 1; k <= 4; k++) {
      const last = addDays(week, 7 * k + 6);
      if (!knownWindow(last, 7)) {
        active.push(null);
        continue;
      }
      const seen = await union(last, 7);
      active.push([...cohort].filter((uid) => seen.has(uid)).length);
    }
    weeks.push({ week, users: cohort.size, active });
  }
  return { days, weeks };
}

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
