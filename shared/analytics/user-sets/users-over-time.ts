/**
 * The day sets read as an app's users over time (`usersOverTime`): DAU, WAU, MAU, stickiness, new
 * and created users, their retention and the weekly cohorts, as exact set operations over the
 * closed days' user sets, beside the users an import brought.
 */
import { importedUsersOf } from "../../adapters/import-records";
import { addDays } from "../../contracts/bucket-layout";
import { existsFrom, type ImportedUser } from "../../contracts/import-records";
import { decodeConversations, decodeUsers } from "./codec";
import { conversationsKey, firstSeenKey, userSetKey } from "./layout";
import { daySetDays, read, type UserSetStore } from "./store";

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
