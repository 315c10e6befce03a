import { gzipSync } from "node:zlib";
import type { S3Client } from "@aws-sdk/client-s3";
import { s3BlobStore } from "../adapters/s3-blob-store";
import { listObjects } from "../adapters/s3-listing";
import { addDays, objectText } from "../contracts/bucket-layout";
import { S3_PREFIX } from "../platform/constants";
import { isMissingObject } from "../platform/errors";
import type { BlobStore } from "../ports/blob-store";
import type { ActiveUser } from "./figures";

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
 *   first sightings back from the later days).
 */
export const USER_SETS_PREFIX = `${S3_PREFIX.users}date=`;
export const FIRST_SEEN_PREFIX = `${S3_PREFIX.users}first-seen/date=`;

/** @example userSetKey("2026-01-02") // "users/date=2026-01-02/users.ndjson.gz" */
export function userSetKey(day: string): string {
  return `${USER_SETS_PREFIX}${day}/users.ndjson.gz`;
}

/** @example firstSeenKey("2026-01-02") // "users/first-seen/date=2026-01-02/users.ndjson.gz" */
export function firstSeenKey(day: string): string {
  return `${FIRST_SEEN_PREFIX}${day}/users.ndjson.gz`;
}

/** Every app's users of a day: app → its users by uid, with when their entity says they were created. */
export type DayUsers = Map<string, ActiveUser[]>;

/** The lines of a set object: `{"app","uid"}`, and `"createdAt"` (epoch s) when a fact gave it. */
export function encodeUsers(users: DayUsers): Uint8Array {
  const lines = [...users.keys()]
    .sort()
    .flatMap((app) => (users.get(app) ?? []).map((u) => JSON.stringify({ app, ...u })));
  return gzipSync(lines.length ? `${lines.join("\n")}\n` : "");
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

async function read(store: UserSetStore, key: string): Promise<DayUsers | undefined> {
  try {
    return decodeUsers(await store.blobs.getBytes(key));
  } catch (error) {
    if (isMissingObject(error)) return undefined;
    throw error;
  }
}

const dayOf = (key: string) => /date=(\d{4}-\d{2}-\d{2})\//.exec(key)?.[1] ?? "";

/**
 * Writes a closed day's user set, and its first sightings: its users seen on no earlier day's
 * first-seen set; a later day's first-seen set that holds one of them (a day closed out of order)
 * is rewritten without them. Reads every first-seen set (each user once: the app's user base).
 *
 * @example await writeDayUsers(store, "2026-01-02", new Map([["app1", ["u1", "u2"]]]))
 */
export async function writeDayUsers(store: UserSetStore, day: string, users: DayUsers): Promise<void> {
  await store.blobs.put(userSetKey(day), encodeUsers(users), { contentType: "application/gzip" });
  const seenBefore = new Set<string>();
  const later: Array<{ day: string; users: DayUsers }> = [];
  for (const key of await store.list(FIRST_SEEN_PREFIX)) {
    const d = dayOf(key);
    if (!d || d === day) continue;
    const set = await read(store, key);
    if (!set) continue;
    if (d < day) for (const [app, list] of set) for (const { uid } of list) seenBefore.add(`${app}\0${uid}`);
    else later.push({ day: d, users: set });
  }
  const first: DayUsers = new Map();
  for (const [app, list] of users) {
    const fresh = list.filter(({ uid }) => !seenBefore.has(`${app}\0${uid}`));
    if (fresh.length) first.set(app, fresh);
  }
  await store.blobs.put(firstSeenKey(day), encodeUsers(first), { contentType: "application/gzip" });
  for (const l of later) {
    let changed = false;
    for (const [app, list] of l.users) {
      const mine = new Set((first.get(app) ?? []).map((u) => u.uid));
      const kept = list.filter(({ uid }) => !mine.has(uid));
      if (kept.length !== list.length) {
        changed = true;
        if (kept.length) l.users.set(app, kept);
        else l.users.delete(app);
      }
    }
    if (changed)
      await store.blobs.put(firstSeenKey(l.day), encodeUsers(l.users), { contentType: "application/gzip" });
  }
}

/** One day of an app's users over time. Null: a window reaches a day not closed yet. */
export interface UsersDay {
  day: string;
  /** Distinct users active that day (the day's `active_users`); null until the day is closed. */
  dau: number | null;
  /** Distinct users active in the 7 (30) days ending that day, each once: not a sum of days. */
  wau: number | null;
  mau: number | null;
  /** dau / mau. */
  stickiness: number | null;
  /** Users first seen that day (in any role: no event announces a registration); null until closed. */
  newUsers: number | null;
  /**
   * Users whose entity says they were created that day (`createdAt`, where a payload carries it),
   * among the users active within 30 days before or after the range; null until closed.
   */
  createdUsers: number | null;
  /** Of those first seen, how many were active again 1, 7 and 30 days later (null: that day is not closed yet). */
  retainedD1: number | null;
  retainedD7: number | null;
  retainedD30: number | null;
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
 * after `to`, one GET each). `closedThrough` is the last closed day: a window past it is null.
 */
export async function usersOverTime(
  store: UserSetStore,
  app: string,
  from: string,
  to: string,
  closedThrough: string,
): Promise<{ days: UsersDay[]; weeks: WeeklyCohort[] }> {
  const cache = new Map<string, Set<string>>();
  /** When each user read so far was created, by their entities (the earliest said). */
  const created = new Map<string, number>();
  const setOf = async (day: string, first = false): Promise<Set<string>> => {
    const key = first ? firstSeenKey(day) : userSetKey(day);
    let set = cache.get(key);
    if (!set) {
      const list = (await read(store, key))?.get(app) ?? [];
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
  const createdOn = (day: string) =>
    [...created.values()].filter((at) => new Date(at * 1000).toISOString().slice(0, 10) === day).length;
  const union = async (last: string, n: number) => {
    const all = new Set<string>();
    for (let i = 0; i < n; i++) for (const uid of await setOf(addDays(last, -i))) all.add(uid);
    return all;
  };
  const retained = async (cohort: Set<string>, day: string) => {
    if (day > closedThrough) return null;
    const active = await setOf(day);
    return [...cohort].filter((uid) => active.has(uid)).length;
  };
  const days: UsersDay[] = [];
  for (let day = from; day <= to; day = addDays(day, 1)) {
    const closed = day <= closedThrough;
    const dau = closed ? (await setOf(day)).size : null;
    const wau = closed ? (await union(day, 7)).size : null;
    const mau = closed ? (await union(day, 30)).size : null;
    const cohort = await setOf(day, true);
    days.push({
      day,
      dau,
      wau,
      mau,
      stickiness: mau && dau !== null ? dau / mau : null,
      newUsers: closed ? cohort.size : null,
      createdUsers: closed ? createdOn(day) : null,
      retainedD1: await retained(cohort, addDays(day, 1)),
      retainedD7: await retained(cohort, addDays(day, 7)),
      retainedD30: await retained(cohort, addDays(day, 30)),
    });
  }
  const weeks: WeeklyCohort[] = [];
  const monday = (day: string) => addDays(day, -((new Date(`${day}T00:00:00Z`).getUTCDay() + 6) % 7));
  for (let week = monday(from); week <= to; week = addDays(week, 7)) {
    const cohort = new Set<string>();
    for (let i = 0; i < 7; i++) for (const uid of await setOf(addDays(week, i), true)) cohort.add(uid);
    const active: Array<number | null> = [];
    for (let k = 1; k <= 4; k++) {
      const last = addDays(week, 7 * k + 6);
      if (last > closedThrough) {
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
