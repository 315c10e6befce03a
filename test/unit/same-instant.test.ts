import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { GroupState } from "../../shared/projections/groups";
import type { MembershipState } from "../../shared/projections/memberships";
import type { PresenceState } from "../../shared/projections/presence";
import type { SessionState } from "../../shared/projections/sessions";
import { compareFacts, lifecycleRank, versionOf, versionReceipt } from "../../shared/projections/version";
import { fixture, type Loose } from "../support/fixtures";
import type { Delivery } from "../support/histories";
import { memoryDeps, memoryStores, projectInBatches } from "../support/projection";

/**
 * Facts at the same instant: the platform's clock ticks in whole seconds for groups and calls (and
 * in ms for presence), so two facts about one item often share an event time. Each scenario is a
 * sequence the platform sends in order; the tables must show its last fact by the rule
 * (event time, lifecycle rank, first receipt, event id) — for every id set, every processing order,
 * every batch split, with SQS redeliveries and with platform retries (the same bytes received
 * again later).
 */

const APP = "2598234fa1e3b9c";
/** The second every fact of a scenario shares. */
const SECOND = 1_763_000_000;
/** The ms every presence fact of a scenario shares. */
const MS = SECOND * 1000 + 417;
/** Receipts: the first delivery arrives 300 ms after the second, the next ones 1 ms apart. */
const RECEIVED = SECOND * 1000 + 300;

/** One id set: the group, user and session ids of a scenario carry this suffix (so do its event ids). */
type Ids = { guid: string; uid: string; session: string };
const idSet = (k: number): Ids => ({ guid: `g-${k}`, uid: `u-${k}`, session: `v1.eu.${APP}.s-${k}` });
const ID_SETS = Array.from({ length: 20 }, (_, k) => idSet(k));

function delivery(body: Loose, receivedAt: number): Delivery {
  const text = JSON.stringify({ ...body, appId: APP });
  return { body: text, receivedAt, eventId: createHash("sha256").update(text).digest("hex") };
}

const group = (trigger: string, ids: Ids, fields: Loose) => {
  const e = fixture(trigger);
  Object.assign(e.data.group, { guid: ids.guid, ...fields });
  return e;
};
const created = (ids: Ids, name = "A") =>
  group("group_created", ids, { name, createdAt: SECOND, owner: "ha", joinedAt: SECOND });
const renamed = (ids: Ids, name: string) => group("group_updated", ids, { name, updatedAt: SECOND });
const deleted = (ids: Ids) => group("group_deleted", ids, { updatedAt: SECOND });
const transferred = (ids: Ids, from: string, to: string) =>
  group("group_owner_transferred", ids, { owner: to, oldOwner: from, updatedAt: SECOND });

const presence = (ids: Ids, status: "online" | "offline", platform = "web") => {
  const e = fixture("user_connection_status_changed");
  e.data.timestamp = MS;
  e.data.user.uid = ids.uid;
  e.data.status = status;
  e.data.currentConnection.action = status === "online" ? "connected" : "disconnected";
  e.data.currentConnection.platform = platform;
  return e;
};

const call = (trigger: string, ids: Ids) => {
  const e = fixture(trigger);
  e.data.call.sentAt = SECOND;
  e.data.call.data.entities.on.entity.sessionid = ids.session;
  return e;
};
const ended = (ids: Ids) => {
  const e = fixture("call_ended");
  Object.assign(e.data, {
    sessionId: ids.session,
    created_at: SECOND,
    destroyed_at: SECOND,
    all_occupants: [],
  });
  return e;
};

const member = (trigger: string, ids: Ids) => {
  const e = fixture(trigger);
  const [first] = Object.values(e.data.members as Record<string, Loose>);
  e.data.members = { [ids.uid]: { ...first, uid: ids.uid } };
  e.data.group.guid = ids.guid;
  return e;
};

type Stores = ReturnType<typeof memoryStores>;
const item = <S>(stores: Stores, table: keyof Stores, id: string) =>
  stores[table].items.get(id) as S | undefined;
const groupOf = (s: Stores, ids: Ids) => item<GroupState>(s, "groups", `${APP}#${ids.guid}|`);
const presenceOf = (s: Stores, ids: Ids) => item<PresenceState>(s, "presence", `${APP}#${ids.uid}|`);
const sessionOf = (s: Stores, ids: Ids) => item<SessionState>(s, "sessions", `${APP}#${ids.session}|`);
const memberOf = (s: Stores, ids: Ids) =>
  item<MembershipState>(s, "memberships", `${APP}#${ids.guid}|${ids.uid}`);

interface Scenario {
  name: string;
  /** The facts in the order the platform sends them; they are received 1 ms apart. */
  sent(ids: Ids): Loose[];
  /** What the tables must show. */
  shows(stores: Stores, ids: Ids): unknown;
  expected: unknown;
}

const SCENARIOS: Scenario[] = [
  {
    name: "group created → deleted: deleted",
    sent: (ids) => [created(ids), deleted(ids)],
    shows: (s, ids) => groupOf(s, ids)?.deleted,
    expected: true,
  },
  {
    name: "group deleted → created (reversed): still deleted",
    sent: (ids) => [deleted(ids), created(ids)],
    shows: (s, ids) => groupOf(s, ids)?.deleted,
    expected: true,
  },
  {
    name: "created (A) → renamed (B): B",
    sent: (ids) => [created(ids, "A"), renamed(ids, "B")],
    shows: (s, ids) => groupOf(s, ids)?.name,
    expected: "B",
  },
  {
    name: "renamed B → renamed C: C",
    sent: (ids) => [created(ids, "A"), renamed(ids, "B"), renamed(ids, "C")],
    shows: (s, ids) => groupOf(s, ids)?.name,
    expected: "C",
  },
  {
    name: "owner transferred ha → hb → hc: hc, previously hb",
    sent: (ids) => [transferred(ids, "ha", "hb"), transferred(ids, "hb", "hc")],
    shows: (s, ids) => [groupOf(s, ids)?.owner, groupOf(s, ids)?.previousOwner],
    expected: ["hc", "hb"],
  },
  {
    name: "presence online → offline in one ms: offline, not listed online",
    sent: (ids) => [presence(ids, "online"), presence(ids, "offline")],
    shows: (s, ids) => [presenceOf(s, ids)?.status, presenceOf(s, ids)?.onlineShard],
    expected: ["offline", undefined],
  },
  {
    name: "online on web → online on android in one ms: android",
    sent: (ids) => [presence(ids, "online", "web"), presence(ids, "online", "android")],
    shows: (s, ids) => presenceOf(s, ids)?.platform,
    expected: "android",
  },
  ...["call_rejected", "call_busy", "call_cancelled", "call_unanswered"].flatMap((outcome): Scenario[] => [
    {
      name: `call initiated → ${outcome.slice(5)}: ${outcome.slice(5)}`,
      sent: (ids) => [call("call_initiated", ids), call(outcome, ids)],
      shows: (s, ids) => sessionOf(s, ids)?.outcome,
      expected: outcome.slice(5),
    },
    {
      name: `call ${outcome.slice(5)} → initiated (reversed): ${outcome.slice(5)}`,
      sent: (ids) => [call(outcome, ids), call("call_initiated", ids)],
      shows: (s, ids) => sessionOf(s, ids)?.outcome,
      expected: outcome.slice(5),
    },
  ]),
  {
    name: "call initiated → ended: ended",
    sent: (ids) => [call("call_initiated", ids), ended(ids)],
    shows: (s, ids) => [sessionOf(s, ids)?.outcome, sessionOf(s, ids)?.endedAt],
    expected: ["ended", SECOND * 1000],
  },
  {
    name: "call ended → initiated (reversed): ended",
    sent: (ids) => [ended(ids), call("call_initiated", ids)],
    shows: (s, ids) => [sessionOf(s, ids)?.outcome, sessionOf(s, ids)?.endedAt],
    expected: ["ended", SECOND * 1000],
  },
  {
    name: "member joined → left, received 1 ms apart: left",
    sent: (ids) => [member("group_member_joined", ids), member("group_member_left", ids)],
    shows: (s, ids) => memberOf(s, ids)?.status,
    expected: "left",
  },
];

/** Every order of a list (the lists here have at most 4 entries). */
function permutations<T>(list: readonly T[]): T[][] {
  if (list.length <= 1) return [[...list]];
  return list.flatMap((x, i) =>
    permutations([...list.slice(0, i), ...list.slice(i + 1)]).map((p) => [x, ...p]),
  );
}

/** Every way to cut `n` deliveries into consecutive batches, as batch sizes. */
function splits(n: number): number[][] {
  if (n === 0) return [[]];
  return Array.from({ length: n }, (_, i) => i + 1).flatMap((size) =>
    splits(n - size).map((rest) => [size, ...rest]),
  );
}

/** Projects the deliveries in this order, cut into batches of these sizes, into fresh in-memory tables. */
async function project(deliveries: readonly Delivery[], sizes: readonly number[]): Promise<Stores> {
  const stores = memoryStores();
  await projectInBatches(deliveries, sizes, memoryDeps(stores));
  return stores;
}

/** Runs every order and split; returns the wrong outcomes as "<order> / <split>: <shown>". */
async function wrongRuns(scenario: Scenario, ids: Ids, deliveries: readonly Delivery[][]): Promise<string[]> {
  const wrong: string[] = [];
  for (const order of deliveries)
    for (const sizes of splits(order.length)) {
      const shown = scenario.shows(await project(order, sizes), ids);
      if (JSON.stringify(shown) !== JSON.stringify(scenario.expected))
        wrong.push(
          `${order.map((d) => d.receivedAt - RECEIVED).join(",")} / ${sizes.join("+")}: ${JSON.stringify(shown)}`,
        );
    }
  return wrong;
}

const sentIn = (scenario: Scenario, ids: Ids) =>
  scenario.sent(ids).map((body, i) => delivery(body, RECEIVED + i));

describe("facts at the same instant", () => {
  it.each(SCENARIOS.map((s) => [s.name, s] as const))(
    "%s — for 20 id sets, every processing order and every batch split",
    async (_name, scenario) => {
      const wrong: string[] = [];
      for (const ids of ID_SETS)
        wrong.push(...(await wrongRuns(scenario, ids, permutations(sentIn(scenario, ids)))));
      expect(wrong).toEqual([]);
    },
  );

  it.each(SCENARIOS.map((s) => [s.name, s] as const))(
    "%s — with an SQS redelivery of each fact, anywhere",
    async (_name, scenario) => {
      const wrong: string[] = [];
      for (const ids of ID_SETS.slice(0, 4)) {
        const sent = sentIn(scenario, ids);
        for (const copy of sent)
          wrong.push(...(await wrongRuns(scenario, ids, permutations([...sent, copy]))));
      }
      expect(wrong).toEqual([]);
    },
  );

  it.each(SCENARIOS.map((s) => [s.name, s] as const))(
    "%s — with a platform retry of each fact (same bytes, received 10 s later), projected after its first delivery",
    async (_name, scenario) => {
      const wrong: string[] = [];
      for (const ids of ID_SETS.slice(0, 4)) {
        const sent = sentIn(scenario, ids);
        for (const original of sent) {
          const retry = { ...original, receivedAt: original.receivedAt + 10_000 };
          const orders = permutations([...sent, retry]).filter(
            (order) => order.indexOf(retry) > order.indexOf(original),
          );
          wrong.push(...(await wrongRuns(scenario, ids, orders)));
        }
      }
      expect(wrong).toEqual([]);
    },
  );

  it("a platform retry projected before its original (which waited in the queue) ranks at the original's receipt once it comes", async () => {
    // joined (r0), left (r1), and a retry of the join received 10 s later but projected first.
    const ids = idSet(0);
    const [joined, left] = sentIn(SCENARIOS.at(-1) as Scenario, ids) as [Delivery, Delivery];
    const retry = { ...joined, receivedAt: joined.receivedAt + 10_000 };
    for (const sizes of splits(3)) {
      const stores = await project([retry, joined, left], sizes);
      expect(memberOf(stores, ids)?.status).toBe("left");
      // The join holds `joined` at its own receipt, not its retry's.
      expect(versionReceipt(memberOf(stores, ids)?.versions.joined ?? "")).toBe(joined.receivedAt);
    }
  });
});

describe("a platform retry projected before its original, with a fact received between them", () => {
  /**
   * Receipt-timed facts: the first at r0, the second 20 s later, and the platform's retry of the
   * first (same bytes) 40 s after it. A slow or throttled batch of the original is enough for the
   * retry to be projected first; every order and batch split must still end in the second fact.
   */
  const renamedUntimed = (ids: Ids, name: string) => {
    const e = group("group_updated", ids, { name });
    delete e.data.group.updatedAt;
    return e;
  };
  const TRIPLES: Scenario[] = [
    {
      name: "member joined (r0), left (r0+20 s), joined again by the platform's retry (r0+40 s): left",
      sent: (ids) => [member("group_member_joined", ids), member("group_member_left", ids)],
      shows: (s, ids) => [memberOf(s, ids)?.status, memberOf(s, ids)?.statusAt],
      expected: ["left", RECEIVED + 20_000],
    },
    {
      name: "member added (r0), kicked (r0+20 s), added again by the platform's retry (r0+40 s): kicked",
      sent: (ids) => [member("group_member_added", ids), member("group_member_kicked", ids)],
      shows: (s, ids) => memberOf(s, ids)?.status,
      expected: "kicked",
    },
    {
      name: "group renamed A (no updatedAt, r0), B (r0+20 s), A again by the platform's retry (r0+40 s): B",
      sent: (ids) => [created(ids, "0"), renamedUntimed(ids, "A"), renamedUntimed(ids, "B")],
      shows: (s, ids) => groupOf(s, ids)?.name,
      expected: "B",
    },
  ];

  it.each(TRIPLES.map((s) => [s.name, s] as const))(
    "%s — every processing order and batch split, for 4 id sets",
    async (_name, scenario) => {
      const wrong: string[] = [];
      for (const ids of ID_SETS.slice(0, 4)) {
        const sent = scenario.sent(ids);
        // The last two facts are the pair: the first of them is retried. Anything before is setup.
        const setup = sent.slice(0, -2).map((body, i) => delivery(body, RECEIVED - 60_000 + i));
        const [first, second] = sent.slice(-2).map((body, i) => delivery(body, RECEIVED + i * 20_000)) as [
          Delivery,
          Delivery,
        ];
        const retry = { ...first, receivedAt: first.receivedAt + 40_000 };
        const orders = permutations([first, second, retry]).map((order) => [...setup, ...order]);
        wrong.push(...(await wrongRuns(scenario, ids, orders)));
      }
      expect(wrong).toEqual([]);
    },
  );
});

describe("the order of facts (shared/projections/version.ts)", () => {
  const fact = (eventTimeMs: number, trigger: string, firstReceivedAt: number, eventId: string) => ({
    eventTimeMs,
    rank: lifecycleRank(trigger),
    firstReceivedAt,
    eventId,
  });

  it("ranks by event time, then lifecycle, then first receipt, then event id", () => {
    const t = SECOND * 1000;
    const ordered = [
      fact(t - 1000, "group_deleted", t + 900, "ff"),
      fact(t, "group_created", t + 900, "ff"),
      fact(t, "group_updated", t + 100, "ff"),
      fact(t, "group_updated", t + 200, "00"),
      fact(t, "group_updated", t + 200, "01"),
      fact(t, "group_deleted", t + 50, "00"),
      fact(t + 1, "group_created", t, "00"),
    ];
    for (let i = 1; i < ordered.length; i++)
      expect(compareFacts(ordered[i - 1] as never, ordered[i] as never)).toBeLessThan(0);
    expect(new Set(ordered.map(versionOf)).size).toBe(ordered.length);
  });

  it("gives each trigger its lifecycle rank", () => {
    expect(["group_created", "call_initiated", "call_started", "meeting_started"].map(lifecycleRank)).toEqual(
      [0, 0, 0, 0],
    );
    expect(
      [
        "group_deleted",
        "call_busy",
        "call_cancelled",
        "call_rejected",
        "call_unanswered",
        "call_ended",
        "meeting_ended",
      ].map(lifecycleRank),
    ).toEqual([2, 2, 2, 2, 2, 2, 2]);
    expect(
      ["group_updated", "group_member_left", "user_connection_status_changed"].map(lifecycleRank),
    ).toEqual([1, 1, 1]);
  });
});
