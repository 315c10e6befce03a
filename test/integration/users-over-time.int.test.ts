import { beforeAll, describe, expect, it } from "vitest";
import { archiveLease } from "../../shared/adapters/archive-lease";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { duckDbEngine } from "../../shared/analytics/engines/duckdb-sql-engine";
import { readQuery } from "../../shared/analytics/queries";
import { daysInRange, rollupDayAllApps, rollupDays } from "../../shared/analytics/rollup";
import { dynamoActivityStore } from "../../shared/analytics/store/dynamo-activity-store";
import {
  daySetDays,
  decodeMembers,
  groupsOverTime,
  hasDaySets,
  membersKey,
  s3UserSets,
  type UsersDay,
  usersOverTime,
  writeDaySets,
} from "../../shared/analytics/user-sets";
import { addDays } from "../../shared/contracts/bucket-layout";
import { archiveBatch } from "../../shared/projector/raw-archive";
import { activityView } from "../../tools/analytics/activity-view/view";
import { createActivityTable } from "../../tools/local/provision";
import {
  expectedCreatedAt,
  expectedGroupsOverTime,
  expectedUsers,
} from "../../tools/simulate/expected-activity";
import { type GeneratedEvent, generateHistory } from "../../tools/simulate/generator";
import { createBucket, testClients, uniqueName } from "../support/aws";
import { queuedAt } from "../support/queued";
import { usersOverTimeRows, weeklyCohortRows } from "../support/users-over-time";

/**
 * Users over time (#33) on fauxqs, DynamoDB Local and DuckDB: 40 days of two apps whose 30 users
 * come and go (one history at a slow pace, so that who is active changes from day to day), archived, every day closed by a final pass in a shuffled order (so that first
 * sightings are taken back by days closed late), then DAU, WAU, MAU, new users and their D+1, D+7,
 * D+30 retention, and the weekly cohorts, compared with a brute-force count over the day sets
 * the history implies, fact by fact (`expectedUsers`).
 */
const { s3, dynamo } = testClients();
const FIRST = "2026-02-01";
const DAYS = daysInRange(FIRST, "2026-03-12");
let bucket: string;
let activityTable: string;

beforeAll(async () => {
  bucket = await createBucket(s3, uniqueName("users"));
  activityTable = uniqueName("activity");
  await createActivityTable(dynamo, activityTable);
});

/** A seeded shuffle (the order days close in). */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let x = seed;
  for (let i = out.length - 1; i > 0; i--) {
    x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
    const j = x % (i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

describe("users over time: the closed days' user sets, exact against the history", () => {
  it("counts DAU, WAU, MAU, new users and retention as a brute-force count over the history's day sets", async () => {
    // Prepare: one history over the 40 days (~1,450 s between actions: ~60 events a day).
    const apps = [uniqueName("uot"), uniqueName("uot")];
    const events: GeneratedEvent[] = generateHistory({
      events: 4800,
      seed: 33,
      apps,
      pace: 1450,
      createdAt: true,
      startAt: Date.parse(`${FIRST}T00:00:00Z`) / 1000,
    }).events.filter((e) => e.at < Date.parse(`${DAYS.at(-1)}T23:00:00Z`));
    const store = s3BlobStore(s3, bucket);
    for (let i = 0; i < events.length; i += 100)
      await archiveBatch(
        events.slice(i, i + 100).map((e) => queuedAt(e, e.at + 500)),
        store,
      );
    const sets = s3UserSets(s3, bucket);
    const deps = {
      engine: duckDbEngine({ s3, bucket }),
      store: dynamoActivityStore(documentClient(dynamo), activityTable),
      now: () => Date.parse("2026-04-01T00:00:00Z"),
      graceMs: 7_200_000,
      userSets: sets,
    };

    // Act: every day closed, in a shuffled order.
    for (const day of shuffled(DAYS, 7)) {
      const pass = await rollupDayAllApps(day, deps);
      expect(pass.failures).toEqual([]);
    }
    const app = apps[0] ?? "";
    const last = DAYS.at(-1) ?? "";
    const result = await usersOverTime(sets, app, FIRST, last, last);

    // Assess: against the day sets the history implies.
    const truth = expectedUsers(events, (e) => e.at + 500).get(app) ?? new Map<string, Set<string>>();
    const on = (day: string) => truth.get(day) ?? new Set<string>();
    const window = (day: string, n: number) => {
      const all = new Set<string>();
      for (let i = 0; i < n; i++)
        for (const uid of on(addDays(day, -i))) if (addDays(day, -i) >= FIRST) all.add(uid);
      return all;
    };
    const createdAt = expectedCreatedAt(events, (e) => e.at + 500).get(app) ?? new Map<string, number>();
    const firstSeen = new Map<string, string>();
    for (const day of DAYS) for (const uid of on(day)) if (!firstSeen.has(uid)) firstSeen.set(uid, day);
    const cohort = (day: string) => [...firstSeen].filter(([, d]) => d === day).map(([uid]) => uid);
    const kept = (day: string, k: number) =>
      addDays(day, k) > last ? null : cohort(day).filter((uid) => on(addDays(day, k)).has(uid)).length;
    const groupTruth = expectedGroupsOverTime(events, (e) => e.at + 500).get(app);
    const want = DAYS.map((day) => {
      const mau = window(day, 30).size;
      return {
        day,
        dau: on(day).size,
        wau: window(day, 7).size,
        mau,
        stickiness: mau ? on(day).size / mau : null,
        newUsers: cohort(day).length,
        createdUsers: [...createdAt.values()].filter(
          (at) => new Date(at * 1000).toISOString().slice(0, 10) === day,
        ).length,
        retainedD1: kept(day, 1),
        retainedD7: kept(day, 7),
        retainedD30: kept(day, 30),
        conversationsStarted: groupTruth?.conversationsStarted.get(day) ?? 0,
      };
    });
    expect(result.days).toEqual(want);
    // The figures move: users come and go, some come back after a week and after a month.
    expect(new Set(want.map((d) => d.dau)).size).toBeGreaterThan(3);
    expect(want.some((d) => (d.mau ?? 0) > (d.wau ?? 0) && (d.wau ?? 0) > d.dau)).toBe(true);
    expect(want.filter((d) => d.newUsers > 0).length).toBeGreaterThan(2);
    expect(want.some((d) => (d.retainedD30 ?? 0) > 0)).toBe(true);
    expect(want.filter((d) => d.createdUsers > 0).length).toBeGreaterThan(5);
    expect(want.filter((d) => d.conversationsStarted > 0).length).toBeGreaterThan(5);
    // Groups: members at the start and end of each day, churn, average size, against a replay of
    // every membership fact in order across the whole history (a day without one carries over).
    let carried = { membersAtStart: 0, membersAtEnd: 0, churned: 0, groups: 0 };
    const groupsWant = DAYS.map((day) => {
      const t = groupTruth?.days.get(day) ?? {
        membersAtStart: carried.membersAtEnd,
        membersAtEnd: carried.membersAtEnd,
        churned: 0,
        groups: carried.groups,
      };
      carried = t;
      return {
        day,
        ...t,
        churn: t.membersAtStart ? t.churned / t.membersAtStart : null,
        averageGroupSize: t.groups ? t.membersAtEnd / t.groups : null,
      };
    });
    expect(await groupsOverTime(sets, app, FIRST, last, last)).toEqual(groupsWant);
    // The history has churn, groups that grow and shrink, and a group deleted with its members.
    expect(events.some((e) => e.appId === app && e.body.includes('"trigger":"group_deleted"'))).toBe(true);
    expect(groupsWant.filter((d) => d.churned > 0).length).toBeGreaterThan(3);
    expect(new Set(groupsWant.map((d) => d.averageGroupSize)).size).toBeGreaterThan(3);
    // The later half of the range alone: the fold starts from the first closed day all the same.
    const mid = DAYS[20] ?? "";
    expect(await groupsOverTime(sets, app, mid, last, last)).toEqual(groupsWant.slice(20));
    // The weekly cohorts: the users first seen in a week, active in each of the 4 weeks after.
    for (const w of result.weeks) {
      const members = [...firstSeen]
        .filter(([, d]) => d >= w.week && d <= addDays(w.week, 6))
        .map(([u]) => u);
      expect(w.users).toBe(members.length);
      w.active.forEach((active, k) => {
        const start = addDays(w.week, 7 * (k + 1));
        if (addDays(start, 6) > last) expect(active).toBeNull();
        else expect(active).toBe(members.filter((u) => window(addDays(start, 6), 7).has(u)).length);
      });
    }
    // query activity --users / --retention show the same (their JSON), and name the last closed day;
    // a week with a day after it (closed, no sets written: the history stops) has no cohort yet (#42).
    const view = await activityView(deps.store, { app, from: FIRST, to: last, users: true, limit: 10 }, sets);
    expect(view.json).toEqual({
      closedThrough: last,
      ...result,
      weeks: result.weeks.map((w) => (addDays(w.week, 6) > last ? { ...w, users: null } : w)),
    });
    // The same by SQL over the day sets, on DuckDB (`sql/users-over-time.sql`, the same text as on Athena).
    const bySql = await deps.engine.query(
      readQuery("users-over-time"),
      { app, from: FIRST, to: last },
      { sets: { from: addDays(FIRST, -30), to: last } },
    );
    expect(bySql.rows).toEqual(usersOverTimeRows(result.days));
    // The weekly cohorts by SQL: the same, week by week.
    const cohortsBySql = await deps.engine.query(
      readQuery("weekly-cohorts"),
      { app, from: FIRST, to: last },
      { sets: { from: FIRST, to: last } },
    );
    expect(cohortsBySql.rows).toEqual(weeklyCohortRows(result.weeks));
    // Groups over time by SQL over the membership history, on DuckDB: the same, day by day.
    const groupsBySql = await deps.engine.query(
      readQuery("groups-over-time"),
      { app, from: FIRST, to: last },
      { sets: { from: FIRST, to: last } },
    );
    expect(groupsBySql.rows).toEqual(
      groupsWant.map((g) => ({
        day: g.day,
        members_at_start: g.membersAtStart,
        members_at_end: g.membersAtEnd,
        churned: g.churned,
        groups_with_members: g.groups,
      })),
    );
    // The membership history as a table: every line of the app's history objects, field by field.
    const changes = await deps.engine.query(
      `SELECT "date", group_id, uid, member, removed, changed_at, deleted FROM membership_changes
       WHERE app = :app ORDER BY "date", group_id, uid, changed_at, deleted`,
      { app },
      { sets: { from: FIRST, to: last } },
    );
    const fromObjects = [];
    for (const day of DAYS) {
      const m = decodeMembers(await sets.blobs.getBytes(membersKey(day))).get(app);
      for (const c of m?.members ?? [])
        fromObjects.push({ ...c, date: day, group_id: c.group, changed_at: c.at, deleted: null });
      for (const d of m?.deletions ?? [])
        fromObjects.push({
          date: day,
          group_id: d.group,
          uid: null,
          member: null,
          removed: null,
          changed_at: null,
          deleted: d.at,
        });
    }
    const rowKey = (r: Record<string, unknown>) =>
      JSON.stringify([
        r.date,
        r.group_id,
        r.uid,
        r.member === null ? null : String(r.member),
        r.removed === null ? null : String(r.removed),
        r.changed_at,
        r.deleted,
      ]);
    expect(changes.rows.map(rowKey).sort()).toEqual(fromObjects.map(rowKey).sort());
    expect(changes.rows.some((r) => r.deleted !== null)).toBe(true);
    // query activity --groups: the membership history's figures beside the rollup's group figures.
    const groupsView = await activityView(
      deps.store,
      { app, from: FIRST, to: last, groups: true, limit: 10 },
      sets,
    );
    const stored = await deps.store.days(app, FIRST, last);
    expect(groupsView.json).toEqual({
      closedThrough: last,
      days: groupsWant.map((g) => {
        const f = stored.find((d) => d.day === g.day)?.figures;
        return {
          ...g,
          groups_created: f?.groups_created ?? null,
          groups_deleted: f?.groups_deleted ?? null,
          active_groups: f?.active_groups ?? null,
          member_joins: f?.member_joins ?? null,
          member_leaves: f?.member_leaves ?? null,
          member_kicks: f?.member_kicks ?? null,
          member_bans: f?.member_bans ?? null,
        };
      }),
    });
    expect(groupsView.rows.map((r) => r.churn)).toEqual(
      groupsWant.map((g) => (g.churn === null ? "" : g.churn.toFixed(3))),
    );
    const retention = await activityView(
      deps.store,
      { app, from: FIRST, to: last, retention: true, limit: 10 },
      sets,
    );
    expect(retention.rows.filter((r) => String(r.cohort).startsWith("week of")).length).toBe(
      result.weeks.length,
    );
    // The day's DAU is the day's active_users figure.
    for (const day of DAYS.slice(0, 5))
      expect((await deps.store.day(app, day))?.figures.active_users ?? 0).toBe(on(day).size);
  }, 300_000);
});

describe("users over time from a one-app rollup (#40 item 11)", () => {
  it("gives the app's users over time for closed days: its entry merged into days already closed, every app's sets written for days not yet closed; the figures those of a pass over every app", async () => {
    // Prepare: six days of two apps. Days 1-3 closed by the schedule's pass over every app, with
    // part of app X's day 2 archived only after (a replay); days 4-6 never passed.
    const own = await createBucket(s3, uniqueName("one-app"));
    const table = uniqueName("activity");
    await createActivityTable(dynamo, table);
    const [x, y] = [uniqueName("ox"), uniqueName("oy")];
    const days = daysInRange("2026-06-01", "2026-06-06");
    const events = generateHistory({
      events: 700,
      seed: 40,
      apps: [x, y],
      pace: 700,
      startAt: Date.parse(`${days[0]}T00:00:00Z`) / 1000,
    }).events.filter((e) => e.at < Date.parse(`${days.at(-1)}T22:00:00Z`));
    const late = (e: GeneratedEvent) =>
      e.appId === x &&
      e.at >= Date.parse(`${days[1]}T12:00:00Z`) &&
      e.at < Date.parse(`${days[2]}T00:00:00Z`);
    const archive = async (list: GeneratedEvent[]) => {
      for (let i = 0; i < list.length; i += 100)
        await archiveBatch(
          list.slice(i, i + 100).map((e) => queuedAt(e, e.at + 500)),
          s3BlobStore(s3, own),
        );
    };
    await archive(events.filter((e) => !late(e)));
    const sets = s3UserSets(s3, own);
    const lease = archiveLease({ doc: documentClient(dynamo), tableName: table }, () =>
      Date.parse("2026-07-01T00:00:00Z"),
    );
    const deps = {
      engine: duckDbEngine({ s3, bucket: own }),
      store: dynamoActivityStore(documentClient(dynamo), table),
      now: () => Date.parse("2026-07-01T00:00:00Z"),
      graceMs: 7_200_000,
      userSets: sets,
      archiveLock: lease,
    };
    for (const day of days.slice(0, 3)) expect((await rollupDayAllApps(day, deps)).failures).toEqual([]);
    await archive(events.filter(late));
    const view = async (app: string) =>
      (
        await activityView(
          deps.store,
          { app, from: days[0] ?? "", to: days.at(-1) ?? "", users: true, limit: 10 },
          sets,
        )
      ).json as { closedThrough: string; days: Array<UsersDay & { blank?: string }> };
    const before = await view(x);

    // Act: held by an erasure, the run says so and writes nothing; then `rollup --app X` over the six days.
    await lease.acquire("erasure e9");
    await expect(rollupDays(days, deps, { app: x })).rejects.toEqual(
      expect.objectContaining({ name: "ArchiveLockedError", holder: "erasure e9" }),
    );
    expect(await hasDaySets(sets, days[3] ?? "")).toBe(false);
    await lease.release("erasure e9");
    const report = await rollupDays(days, deps, { app: x });
    const oneApp = { x: await view(x), y: await view(y) };
    // The reference: every day passed over every app, from the archive as it now is.
    for (const day of days) expect((await rollupDayAllApps(day, deps)).failures).toEqual([]);
    const everyApp = { x: await view(x), y: await view(y) };

    // Assess
    expect(report.failures).toEqual([]);
    expect(report.open).toEqual([]);
    expect(report.rollups.map((r) => `${r.day} ${r.final} ${r.daySets}`)).toEqual(
      days.map((d, i) => `${d} true ${i < 3 ? "merged" : "written"}`),
    );
    // Before, the days never passed were blank for X, and its day 2 lacked the late part.
    expect(before.closedThrough).toBe(days[2]);
    expect(before.days.slice(3).map((d) => d.dau)).toEqual([null, null, null]);
    expect(oneApp.x.days.map((d) => d.dau)).not.toContain(null);
    expect(oneApp.x.days[1]?.dau).toBeGreaterThan(before.days[1]?.dau ?? 0);
    expect(oneApp.x).toEqual(everyApp.x);
    // The other app's sets were kept (days 1-3): the same as a pass over every app. Its days 4-6
    // have sets (written whole) but no figures of its own yet (a one-app rollup computes X's
    // only): they say "not computed", with the rollup to run (#52), never a DAU of 0.
    // (Day 3's D+1 return reads day 4, not computed for Y yet: blank too.)
    expect(oneApp.y.days.slice(0, 2)).toEqual(everyApp.y.days.slice(0, 2));
    expect(oneApp.y.days[2]).toEqual({ ...everyApp.y.days[2], retainedD1: null });
    expect(oneApp.y.days.slice(3).map((d) => d.blank)).toEqual([
      "not computed",
      "not computed",
      "not computed",
    ]);
    expect(everyApp.y.days.map((d) => d.dau)).not.toContain(null);
  }, 300_000);

  it("leaves blank a day never closed between closed days, and every window that reaches it, instead of counting no one", async () => {
    // Prepare: days 1 and 3 closed, day 2 not (its final pass deferred past the next day, say).
    const own = await createBucket(s3, uniqueName("gap"));
    const sets = s3UserSets(s3, own);
    const day = (users: string[]) =>
      new Map([
        ["g", { users: users.map((uid) => ({ uid })), conversations: [], members: [], deletions: [] }],
      ]);
    await writeDaySets(sets, "2026-06-01", day(["a", "b"]));
    await writeDaySets(sets, "2026-06-03", day(["b", "c"]));

    // Act
    const { days, weeks } = await usersOverTime(sets, "g", "2026-06-01", "2026-06-03", "2026-06-03");

    // Assess
    expect(await daySetDays(sets)).toEqual(["2026-06-01", "2026-06-03"]);
    expect(days.map((d) => [d.day, d.dau, d.wau, d.newUsers, d.retainedD1])).toEqual([
      // Before day 1 is before the history: no one. Day 1's D+1 is day 2: unknown.
      ["2026-06-01", 2, 2, 2, null],
      ["2026-06-02", null, null, null, null],
      ["2026-06-03", 2, null, 1, null],
    ]);
    expect(weeks.every((w) => w.active.every((a) => a === null))).toBe(true);
  });
});
