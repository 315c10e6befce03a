import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { DaySets } from "../../shared/analytics/figures";
import {
  CONVERSATIONS_PREFIX,
  conversationsKey,
  decodeConversations,
  decodeUsers,
  FIRST_SEEN_PREFIX,
  firstSeenKey,
  hasDaySets,
  mergeAppDaySets,
  s3UserSets,
  userSetKey,
  writeDaySets,
} from "../../shared/analytics/user-sets";
import { addDays } from "../../shared/contracts/bucket-layout";
import { createBucket, testClients, uniqueName } from "../support/aws";

/**
 * The first sightings (new users, conversations started) on fauxqs, for every order days close in
 * (fast-check): each day closed one or more times, a re-close with what late events added, in any
 * order, by a pass over every app (`writeDaySets`) or by one app's pass merging its entry
 * (`mergeAppDaySets`, as `rollupDay` does once the day has sets); at the end each day's sets are
 * its final ones and its first sightings what that day's final set holds that no earlier day's
 * does, whatever came first.
 */
const { s3 } = testClients();
const FIRST = "2026-05-01";
const DAYS = Array.from({ length: 6 }, (_, i) => addDays(FIRST, i));
const IDS = ["a", "b", "c", "d", "e", "f"];
const APPS = ["app1", "app2"];

const setsOf = (ids: Record<string, string[]>): Map<string, DaySets> =>
  new Map(
    APPS.map((app) => [
      app,
      {
        users: (ids[app] ?? []).map((uid) => ({ uid: `${app}-u-${uid}` })),
        conversations: (ids[app] ?? []).map((c) => `${app}-c-${c}`),
        members: [],
        deletions: [],
      },
    ]),
  );

describe("day sets: first sightings whatever order days close in", () => {
  it("leaves each day's first sightings as the brute force says, for any closing order and re-closes (fast-check)", async () => {
    await fc.assert(
      fc.asyncProperty(
        // Each app's final set of each day (sorted ids).
        fc.array(
          fc.record(Object.fromEntries(APPS.map((a) => [a, fc.subarray(IDS)]))) as fc.Arbitrary<
            Record<string, string[]>
          >,
          { minLength: DAYS.length, maxLength: DAYS.length },
        ),
        // Closes: a day each, how much of its final set an early close had (late events add the
        // rest), and by whom: every app, or one app merging its entry.
        fc.array(
          fc.record({
            day: fc.nat(DAYS.length - 1),
            share: fc.double({ min: 0, max: 1, noNaN: true }),
            app: fc.option(fc.constantFrom(...APPS), { nil: undefined }),
          }),
          { maxLength: 10 },
        ),
        fc.array(fc.nat(), { minLength: DAYS.length, maxLength: DAYS.length }),
        // Each day's last close: by every app at once, or by each app's own pass in turn.
        fc.array(fc.boolean(), { minLength: DAYS.length, maxLength: DAYS.length }),
        async (finals, early, order, perApp) => {
          const bucket = await createBucket(s3, uniqueName("daysets"));
          const store = s3UserSets(s3, bucket);
          // Early closes, then every day's last close, in a shuffled order.
          const last = DAYS.map((_, i) => ({ day: i, share: 1 }))
            .map((c, i) => ({ c, k: order[i] ?? 0 }))
            .sort((a, b) => a.k - b.k)
            .flatMap(
              ({ c }): Array<{ day: number; share: number; app?: string }> =>
                perApp[c.day] ? APPS.map((app) => ({ ...c, app })) : [{ ...c, app: undefined }],
            );
          for (const { day, share, app } of [...early, ...last]) {
            const final = finals[day] ?? {};
            const part = Object.fromEntries(
              APPS.map((a) => [a, (final[a] ?? []).slice(0, Math.round((final[a] ?? []).length * share))]),
            );
            const sets = setsOf(part);
            const date = DAYS[day] as string;
            // One app's pass merges into a day with sets; a day without is closed for every app.
            if (app !== undefined && (await hasDaySets(store, date)))
              await mergeAppDaySets(store, date, app, sets.get(app) as DaySets);
            else await writeDaySets(store, date, sets);
          }
          const seen = new Set<string>();
          for (const [i, day] of DAYS.entries()) {
            const want = new Map(
              APPS.map((app) => [app, (finals[i]?.[app] ?? []).filter((id) => !seen.has(`${app}/${id}`))]),
            );
            for (const app of APPS) for (const id of finals[i]?.[app] ?? []) seen.add(`${app}/${id}`);
            const users = decodeUsers(await store.blobs.getBytes(firstSeenKey(day)));
            const active = decodeUsers(await store.blobs.getBytes(userSetKey(day)));
            const conversations = decodeConversations(await store.blobs.getBytes(conversationsKey(day)));
            for (const app of APPS) {
              const ids = want.get(app) ?? [];
              expect(
                (users.get(app) ?? []).map((u) => u.uid),
                `${day} ${app}`,
              ).toEqual(ids.map((id) => `${app}-u-${id}`));
              expect(
                (active.get(app) ?? []).map((u) => u.uid),
                `${day} ${app}`,
              ).toEqual((finals[i]?.[app] ?? []).map((id) => `${app}-u-${id}`));
              expect(conversations.get(app) ?? [], `${day} ${app}`).toEqual(
                ids.map((id) => `${app}-c-${id}`),
              );
            }
          }
          // One object per day of each kind, whatever the number of closes.
          expect((await store.list(FIRST_SEEN_PREFIX)).length).toBe(DAYS.length);
          expect((await store.list(CONVERSATIONS_PREFIX)).length).toBe(DAYS.length);
        },
      ),
      { numRuns: 30 },
    );
  }, 300_000);
});
