import { evolveOnce, RETRY_SPREAD_MS, RUNNER_UPS_KEPT } from "@webhook-backend/stream/fold";
import { compactFactId } from "@webhook-backend/stream/known-facts";
import { type GroupState, groupsProjection } from "@webhook-backend/stream/projections/groups";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Delivery } from "../support/histories";
import { APP, bodyOf, busyGroupHistory, delivery, type Fact, GUID, R0 } from "../support/hot-groups";
import { inputOf, memoryDeps, memoryStores, projectAll, projectInBatches } from "../support/projection";

/**
 * Hot groups (#57, item 1): a group whose members join faster than an item's runner-ups can
 * remember (a class starting, an admin adding people), with the platform's retries among them.
 * The tables must show the set of facts, each at its earliest receipt, whatever the number of
 * facts within W: the expected state comes from a model written from the documents' rules, not
 * from the fold.
 */

type Stores = ReturnType<typeof memoryStores>;
const groupOf = (stores: Stores) =>
  stores.groups.items.get(`${APP}#${GUID}|`) as Record<string, unknown> | undefined;

describe("a busy group outruns K, in receipt order (#57, item 1)", () => {
  // Eight joins 1 s apart, the first retried 10 s later and received last (`busyGroupHistory`).
  const { joins, first, retry, received, expected } = busyGroupHistory();
  const shown = (s: Stores) => [groupOf(s)?.membersCount, groupOf(s)?.updatedAt];

  it("one by one in receipt order: 9 members, the last join's info", async () => {
    const stores = memoryStores();
    await projectAll(received, memoryDeps(stores));
    expect(shown(stores)).toEqual(expected);
  });

  it("in one batch, in batches of 2 and 4, and with the retry right after its original: the same", async () => {
    for (const sizes of [[received.length], [2], [4]]) {
      const stores = memoryStores();
      await projectInBatches(received, sizes, memoryDeps(stores));
      expect(shown(stores)).toEqual(expected);
    }
    const stores = memoryStores();
    await projectAll([first, retry, ...joins.slice(1)], memoryDeps(stores));
    expect(shown(stores)).toEqual(expected);
  });
});

describe("an item written before #49, with its `seen` memory (#57)", () => {
  it("moves the ids `seen` holds to `known` at its next write, and still recognises a retry of one", () => {
    // Prepare: the joins 2 … 8 folded; the first join remembered only by a legacy `seen`.
    const { joins, retry } = busyGroupHistory();
    const fold = (state: GroupState | null, d: Delivery) =>
      evolveOnce(groupsProjection, inputOf(JSON.parse(d.body), d.receivedAt, d.eventId) as never, {
        pk: `${APP}#${GUID}`,
      })(state);
    const first = joins[0] as Delivery;
    const later = joins.slice(1).reduce<GroupState | null>(fold, null) as GroupState;
    const legacy: GroupState = { ...later, seen: { [first.eventId.slice(0, 16)]: first.receivedAt } };
    const ninth = delivery(
      bodyOf({
        trigger: "group_member_joined",
        uid: "u9",
        membersCount: 10,
        onlineMembersCount: 1,
        updatedAt: R0 / 1000 + 8,
      }),
      R0 + 8000,
    );

    // Act
    const written = fold(legacy, ninth);
    const retried = fold(written, retry);

    // Assess
    expect(written.seen).toBeUndefined();
    expect(Object.values(written.known ?? {}).join("")).toContain(compactFactId(first.eventId.slice(0, 12)));
    expect(retried).toBe(written);
    expect(retried.membersCount).toBe(10);
  });
});

/**
 * The model, written from the documents, not from the fold: every fact once, at the earliest
 * receipt among its copies (docs/tables.md: "Membership events carry no event time, so the edge's
 * first receipt is their event time; a platform retry of the same bytes keeps its first
 * version"); facts ordered by (event time, rank, first receipt, event id), which for membership
 * facts (all rank 1, no event time) is (first receipt, event id) ("two different facts with
 * everything else equal: the greater event id"). The group: `count` is "the latest report of any
 * group event", and `info` is filled by membership events "only while no group event has" (none
 * here): both the latest fact's. A member: `status` "the latest membership event for the pair",
 * `joinedAt` "the latest event that made the user a member" (its first receipt).
 */
function expectedTables(deliveries: readonly Delivery[], facts: ReadonlyMap<string, Fact>) {
  const earliest = new Map<string, number>();
  for (const d of deliveries)
    earliest.set(d.eventId, Math.min(d.receivedAt, earliest.get(d.eventId) ?? d.receivedAt));
  const ranked = [...earliest].map(([id, at]) => ({ id, at, fact: facts.get(id) as Fact }));
  const latest = (list: typeof ranked) =>
    list.reduce<(typeof ranked)[number] | undefined>(
      (best, f) => (!best || f.at > best.at || (f.at === best.at && f.id > best.id) ? f : best),
      undefined,
    );
  const top = latest(ranked);
  const group = top && {
    membersCount: top.fact.membersCount,
    onlineMembersCount: top.fact.onlineMembersCount,
    updatedAt: top.fact.updatedAt,
  };
  const STATUS = {
    group_member_joined: "member",
    group_member_added: "member",
    group_member_left: "left",
    group_member_kicked: "kicked",
  } as const;
  const members = new Map<string, { status: string; joinedAt: number | undefined }>();
  for (const uid of new Set(ranked.map((f) => f.fact.uid))) {
    const own = ranked.filter((f) => f.fact.uid === uid);
    const last = latest(own);
    if (last)
      members.set(uid, {
        status: STATUS[last.fact.trigger],
        joinedAt: latest(own.filter((f) => STATUS[f.fact.trigger] === "member"))?.at,
      });
  }
  return { group, members };
}

/** What the tables show of the hot group and its members, in the model's terms. */
function shownTables(stores: Stores) {
  const g = groupOf(stores);
  const group = g && {
    membersCount: g.membersCount,
    onlineMembersCount: g.onlineMembersCount,
    updatedAt: g.updatedAt,
  };
  const members = new Map<string, { status: string; joinedAt: number | undefined }>();
  for (const item of stores.memberships.items.values()) {
    const m = item as { uid: string; status: string; joinedAt?: number };
    members.set(m.uid, { status: m.status, joinedAt: m.joinedAt });
  }
  return { group, members };
}

/** The platform's retries: ~10 s and ~30 s after a failed delivery, each waiting up to 2 s (docs/design-and-limits.md). */
const RETRY_DELAYS = [[], [], [], [], [10_000], [30_000], [10_000, 30_000]] as const;

/**
 * A hot group: `n` (tens to hundreds) membership facts within 2 W, about up to `n` users, some
 * retried by the platform; processed in any order, with SQS repeats, in batches of any sizes, as
 * long as at most K facts have a later copy processed before their earliest (the documented bound:
 * a part keeps K runner-ups that can take it back).
 */
const hotGroups = fc
  .integer({ min: 20, max: 200 })
  .chain((n) =>
    fc.record({
      facts: fc.array(
        fc.record({
          trigger: fc.constantFrom(
            "group_member_joined",
            "group_member_joined",
            "group_member_added",
            "group_member_left",
            "group_member_kicked",
          ),
          user: fc.integer({ min: 0, max: n }),
          membersCount: fc.integer({ min: 1, max: 600 }),
          onlineMembersCount: fc.integer({ min: 0, max: 50 }),
          gap: fc.integer({ min: 1, max: Math.floor((2 * RETRY_SPREAD_MS) / n) }),
          retries: fc.constantFrom(...RETRY_DELAYS),
          wait: fc.integer({ min: 0, max: 2000 }),
        }),
        { minLength: n, maxLength: n },
      ),
      order: fc.array(fc.integer(), { minLength: 3 * n + 10, maxLength: 3 * n + 10 }),
      repeats: fc.array(fc.nat(), { maxLength: 8 }),
      ahead: fc.integer({ min: 0, max: RUNNER_UPS_KEPT }),
      sizes: fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 5 }),
    }),
  )
  .map(({ facts: drawn, order, repeats, ahead, sizes }) => {
    const facts = new Map<string, Fact>();
    const received: Delivery[] = [];
    let at = R0;
    drawn.forEach((d, i) => {
      at += d.gap;
      const fact: Fact = {
        trigger: d.trigger,
        uid: `u${d.user}`,
        membersCount: d.membersCount,
        onlineMembersCount: d.onlineMembersCount,
        updatedAt: R0 / 1000 + i,
      };
      const original = delivery(bodyOf(fact), at);
      facts.set(original.eventId, fact);
      received.push(
        original,
        ...d.retries.map((after) => ({ ...original, receivedAt: at + after + d.wait })),
      );
    });
    // SQS repeats (the same delivery again), then any order.
    for (const r of repeats) received.push(received[r % received.length] as Delivery);
    const processed = received
      .map((d, i) => ({ d, key: order[i % order.length] ?? 0, i }))
      .sort((a, b) => a.key - b.key || a.i - b.i)
      .map((x) => x.d);
    // The bound: beyond `ahead` facts, a fact's earliest copy is processed before its others.
    let allowed = ahead;
    for (const id of facts.keys()) {
      const at = processed.flatMap((d, i) => (d.eventId === id ? [i] : []));
      const earliest = at.reduce((e, i) =>
        (processed[i] as Delivery).receivedAt < (processed[e] as Delivery).receivedAt ? i : e,
      );
      const first = at[0] as number;
      if (earliest === first) continue;
      if (allowed-- > 0) continue;
      [processed[first], processed[earliest]] = [
        processed[earliest] as Delivery,
        processed[first] as Delivery,
      ];
    }
    // A failure prints the facts and the order, not every body.
    const label = (d: Delivery) => `${d.eventId.slice(0, 6)}@${d.receivedAt - R0}`;
    const summary = () =>
      `facts ${JSON.stringify([...facts].map(([id, f]) => [id.slice(0, 6), f.trigger.slice(13), f.uid, f.membersCount]))}; processed ${processed.map(label).join(" ")}; batches ${sizes}`;
    return { received, processed, facts, sizes, [fc.toStringMethod]: summary };
  });

describe("hot groups: tens to hundreds of membership facts within 2 W, the platform's retries among them", () => {
  it("the group's count and info and each member's status are the model's, in any processing order within the bound (pure, many runs)", async () => {
    await fc.assert(
      fc.asyncProperty(hotGroups, async ({ received, processed, facts, sizes }) => {
        const stores = memoryStores();
        await projectInBatches(processed, sizes, memoryDeps(stores), 2);
        const expected = expectedTables(received, facts);
        const shown = shownTables(stores);
        expect(shown.group).toEqual(expected.group);
        expect(Object.fromEntries(shown.members)).toEqual(Object.fromEntries(expected.members));
      }),
      { numRuns: 60 },
    );
  });
});
