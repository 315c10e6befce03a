/**
 * The day sets' writing: a closed day's every set at once (`writeDaySets`, a final pass), one
 * app's merged into a closed day's (`mergeAppDaySets`, a one-app pass), and the first sightings
 * of users and conversations kept exact whatever order days close in (`writeFirstSeen`).
 */
import pLimit from "p-limit";
import { dayOfKey } from "../../contracts/bucket-layout";
import type { ActiveUser, DaySets } from "../figures";
import {
  type DayMembers,
  type DayUsers,
  decodeConversations,
  decodeMembers,
  decodeUsers,
  encodeConversations,
  encodeMembers,
  encodeUsers,
} from "./codec";
import {
  CONVERSATIONS_PREFIX,
  conversationsKey,
  FIRST_SEEN_PREFIX,
  firstSeenKey,
  membersKey,
  userSetKey,
} from "./layout";
import { read, type UserSetStore } from "./store";

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
