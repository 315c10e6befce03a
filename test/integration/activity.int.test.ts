import { createHash } from "node:crypto";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { archiveLease } from "../../shared/adapters/archive-lease";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { listObjects } from "../../shared/adapters/s3-listing";
import { duckDbEngine } from "../../shared/analytics/engines/duckdb-sql-engine";
import { type DayActivity, TOP_LIMIT } from "../../shared/analytics/figures";
import {
  dayActivities,
  dayActivity,
  type RollupDependencies,
  rollupDay,
  rollupDayAllApps,
} from "../../shared/analytics/rollup";
import { dynamoActivityStore } from "../../shared/analytics/store/dynamo-activity-store";
import { edgeArchiveDayPrefix, rawArchiveDayPrefix } from "../../shared/contracts/bucket-layout";
import { PLATFORM_RETRY_HORIZON_MS, S3_PREFIX } from "../../shared/platform/constants";
import type { BlobStore } from "../../shared/ports/blob-store";
import type { QueuedEvent } from "../../shared/projector/queued-event";
import { archiveBatch, archiveLine } from "../../shared/projector/raw-archive";
import { projectionStores } from "../../shared/projector/stores";
import { createActivityTable, createProjectionTables, localTableNames } from "../../tools/local/provision";
import { replayArchive } from "../../tools/ops/operations";
import { expectedActivity, expectedDaySets, expectedUsers } from "../../tools/simulate/expected-activity";
import { type GeneratedEvent, generateHistory } from "../../tools/simulate/generator";
import { createBucket, testClients, uniqueName } from "../support/aws";
import { fixture } from "../support/fixtures";

const { s3, dynamo } = testClients();
const doc = documentClient(dynamo);
let bucket: string;
let archive: BlobStore;
let activityTable: string;

/** 23:54 UTC: the history crosses midnight, so two days and their hours are checked. */
const START = Date.UTC(2026, 0, 2, 23, 54) / 1000;
const DAYS = ["2026-01-02", "2026-01-03"];
const HOUR = 3_600_000;

beforeAll(async () => {
  bucket = await createBucket(s3, uniqueName("activity"));
  archive = s3BlobStore(s3, bucket);
  activityTable = uniqueName("activity");
  await createActivityTable(dynamo, activityTable);
});

/** A simulated history of one app (its messages go to users and to groups). */
function historyOf(appId: string, events = 900, seed = 7, startAt = START): GeneratedEvent[] {
  const history = generateHistory({ events, seed, apps: [appId], startAt });
  return history.events;
}

/**
 * Receipt: 300 ms after the event and 1 ms per event sent before it (the edge's receipts are
 * strictly increasing, so two facts of one instant rank in the order they were sent, whatever
 * their ids: the property's runs rename the app, which changes every id), but every 50th event
 * arrives two hours late.
 */
const receiptOf = (e: GeneratedEvent, i: number) => e.at + 300 + i + (i % 50 === 0 ? 2 * HOUR : 0);

function queued(e: GeneratedEvent, receivedAt: number): QueuedEvent {
  const eventId = createHash("sha256").update(e.body).digest("hex");
  return {
    messageId: `m-${eventId.slice(0, 8)}-${receivedAt}`,
    eventId,
    receivedAt,
    trigger: e.trigger,
    appId: e.appId,
    body: e.body,
  };
}

async function figuresFromArchive(appId: string, day: string, options: { neighbours?: boolean } = {}) {
  return (await dayActivity(duckDbEngine({ s3, bucket }), appId, day, options)).activity;
}

/** The archive as the projector wrote it before edge objects existed: raw objects only. */
const withoutEdges = (store: BlobStore): BlobStore => ({
  ...store,
  put: async (key, body, options) =>
    key.startsWith(S3_PREFIX.edge) ? { bucket: store.bucket, key, size: 0 } : store.put(key, body, options),
});

/** Whether an event's time is its receipt (no time in its payload): its archive line says. */
const receiptTimed = (e: GeneratedEvent) => archiveLine(queued(e, 0)).eventTime === 0;

/**
 * A member joins 10 s before midnight and the platform retries the delivery 30 s later, after
 * midnight; a message sent at 23:30 arrives at 01:00, and again at 01:05.
 */
function acrossMidnight(appId: string): QueuedEvent[] {
  const at = (day: number, h: number, m = 0, sec = 0) => Date.UTC(2026, 0, day, h, m, sec);
  const joined = fixture("group_member_joined");
  joined.appId = appId;
  const message = fixture("message_sent");
  message.appId = appId;
  Object.assign(message.data.message, { id: "late-1", sentAt: at(2, 23, 30) / 1000 });
  const join = { body: JSON.stringify(joined), trigger: "group_member_joined", appId, at: 0 };
  const late = { body: JSON.stringify(message), trigger: "message_sent", appId, at: at(2, 23, 30) };
  return [
    queued(join, at(2, 23, 59, 50)),
    queued(join, at(3, 0, 0, 20)),
    queued(late, at(3, 1)),
    queued(late, at(3, 1, 5)),
  ];
}

describe("activity figures: SQL over the archive on DuckDB equals what the history implies", () => {
  it.each([
    ["the raw archive and its edges", false],
    ["an archive written before edge objects, read with its neighbours (rollup --neighbours)", true],
  ])(
    "rolls up two days into the activity table, each figure, hour and top list as the history implies: %s",
    async (_, old) => {
      // Prepare: two apps in the same batches, one whose id needs URL-encoding (issue #29: it
      // used to get zero figures locally, the query comparing the encoded id with the decoded one).
      const appId = uniqueName("app");
      const oddApp = `${uniqueName("app")}/ü 1?&%`;
      const events = historyOf(appId);
      const odd = historyOf(oddApp, 400, 9);
      const both = events.flatMap((e, i) => (odd[i] ? [e, odd[i] as GeneratedEvent] : [e]));
      const receipts = new Map(both.map((e, i) => [e, receiptOf(e, i)]));
      for (let i = 0; i < both.length; i += 100)
        await archiveBatch(
          both.slice(i, i + 100).map((e) => queued(e, receipts.get(e) ?? 0)),
          old ? withoutEdges(archive) : archive,
        );
      const expectedApps = expectedActivity(both, (e) => receipts.get(e) ?? 0);
      const expected = expectedApps.get(appId);
      const store = dynamoActivityStore(doc, activityTable);
      const deps: RollupDependencies = {
        engine: duckDbEngine({ s3, bucket }),
        store,
        now: () => Date.UTC(2026, 0, 5),
        graceMs: 2 * HOUR,
      };

      // Act: one pass a day for every app.
      const passes = [];
      for (const day of DAYS) passes.push(await rollupDayAllApps(day, deps, { neighbours: old }));

      // Assess
      expect(passes.map((p) => [p.queries, p.failures.length, p.final])).toEqual([
        [1, 0, true],
        [1, 0, true],
      ]);
      for (const app of [appId, oddApp])
        expect(passes.map((p) => p.rollups.find((r) => r.appId === app)?.outcome)).toEqual([
          "written",
          "written",
        ]);
      for (const day of DAYS) {
        const oddStored = await store.day(oddApp, day);
        expect(oddStored?.figures).toEqual(expectedApps.get(oddApp)?.get(day)?.figures);
        expect(await store.topUsers(oddApp, day, 5)).toEqual(
          expectedApps.get(oddApp)?.get(day)?.topUsers.slice(0, 5),
        );
        const want = expected?.get(day);
        const stored = await store.day(appId, day);
        expect(stored?.figures).toEqual(want?.figures);
        expect(stored?.messageKinds).toEqual(want?.messageKinds);
        // Presence users by client platform (spec 6.6), several platforms on each day.
        expect(stored?.platforms).toEqual(want?.platforms);
        expect(Object.keys(want?.platforms ?? {}).length).toBeGreaterThan(1);
        expect(await store.hours(appId, day)).toEqual(want?.hours);
        expect(await store.topGroups(appId, day, TOP_LIMIT)).toEqual(want?.topGroups);
        expect(await store.topUsers(appId, day, 5)).toEqual(want?.topUsers.slice(0, 5));
      }
      expect(expected?.get("2026-01-02")?.figures.messages).toBeGreaterThan(0);
      expect(expected?.get("2026-01-03")?.figures.peak_online).toBeGreaterThan(0);
      // The simulator sends a third of its members' messages to their groups.
      expect(expected?.get("2026-01-02")?.figures.messages_group).toBeGreaterThan(0);
      expect(expected?.get("2026-01-02")?.topGroups.length).toBeGreaterThan(1);
      expect(expectedApps.get(oddApp)?.get("2026-01-02")?.figures.messages).toBeGreaterThan(0);
    },
  );

  it("counts a late event and a receipt-timed retry across midnight once, on their own day, from the day's raw archive and edge only", async () => {
    // Prepare
    const appId = uniqueName("app");
    // Each delivery in a batch of its own, as a projector would receive them minutes apart.
    for (const delivery of acrossMidnight(appId)) await archiveBatch([delivery], archive);
    const oldApp = uniqueName("app");
    for (const delivery of acrossMidnight(oldApp)) await archiveBatch([delivery], withoutEdges(archive));
    const engine = duckDbEngine({ s3, bucket });
    const sizeOf = async (prefix: string) =>
      (await listObjects(s3, bucket, prefix)).reduce((sum, o) => sum + o.size, 0);

    // Act
    const [before, after] = await Promise.all(DAYS.map((day) => dayActivity(engine, appId, day)));
    const [oldBefore, oldAfter] = await Promise.all(DAYS.map((day) => dayActivity(engine, oldApp, day)));
    const [oldBeforeNeighbours, oldAfterNeighbours] = await Promise.all(
      DAYS.map((day) => dayActivity(engine, oldApp, day, { neighbours: true })),
    );

    // Assess: the join on the 2nd (its first receipt), the message on the 2nd (its event time).
    const counted = (a: typeof before) => [a?.activity.figures.member_joins, a?.activity.figures.messages];
    expect(counted(before)).toEqual([1, 1]);
    expect(counted(after)).toEqual([0, 0]);
    // What was read: the day's raw archive and its edge, nothing else.
    for (const [day, read] of [
      ["2026-01-02", before],
      ["2026-01-03", after],
    ] as const)
      expect(read?.bytesScanned).toBe(
        (await sizeOf(rawArchiveDayPrefix(day))) + (await sizeOf(edgeArchiveDayPrefix(day))),
      );
    // Without edges the same read counts the join twice and misses the late message; the
    // neighbours read of an archive written before them counts both once.
    expect([counted(oldBefore), counted(oldAfter)]).toEqual([
      [1, 0],
      [1, 0],
    ]);
    expect([counted(oldBeforeNeighbours), counted(oldAfterNeighbours)]).toEqual([
      [1, 1],
      [0, 0],
    ]);
  });

  it("counts edits and deletes on the day of their change (editedAt, deletedAt), in either layout, two edits as two", async () => {
    // Prepare: message 101 sent on the 2nd; edited twice and deleted on the 3rd, the first edit
    // delivered in the live layout and again in the published one (one fact).
    const appId = uniqueName("app");
    const at = (h: number, m: number) => Date.UTC(2026, 0, 3, h, m) / 1000;
    const sent = fixture("message_sent");
    Object.assign(sent.data.message, { id: "101", sender: "qa-user-1", sentAt: at(0, 0) - 1800 });
    const live = fixture("observed-live/message_edited.live");
    Object.assign(live.data.message, { sentAt: at(0, 0) - 1800, editedAt: at(0, 10), updatedAt: at(0, 10) });
    const published = fixture("message_edited");
    Object.assign(published.data.message, { sentAt: at(0, 10) });
    Object.assign(published.data.message.data.entities.on.entity, { id: "101", editedAt: at(0, 10) });
    published.data.message.data.entities.by.entity.uid = "qa-user-1";
    const again = structuredClone(live);
    Object.assign(again.data.message, { editedAt: at(0, 20), updatedAt: at(0, 20) });
    const deleted = fixture("observed-live/message_deleted.live");
    Object.assign(deleted.data.message, {
      sentAt: at(0, 0) - 1800,
      deletedAt: at(0, 30),
      updatedAt: at(0, 30),
    });
    const deliveries = [sent, live, published, again, deleted].map((body, i) => {
      body.appId = appId;
      const e = { body: JSON.stringify(body), trigger: body.trigger, appId, at: 0 };
      return queued(e, Date.UTC(2026, 0, 3, 1, i));
    });
    await archiveBatch(deliveries, archive);

    // Act
    const [second, third] = await Promise.all(DAYS.map((day) => figuresFromArchive(appId, day)));

    // Assess
    const of = (f: typeof second) => [f?.figures.messages, f?.figures.edited, f?.figures.deleted];
    expect(of(second)).toEqual([1, 0, 0]);
    expect(of(third)).toEqual([0, 2, 1]);
    expect(third?.figures.active_users).toBe(1);
    expect(third?.hours[0]?.figures.edited).toBe(2);
  });

  it("keeps edge copies out of what reads each event once: the view archive_events and replay", async () => {
    // Prepare
    const appId = uniqueName("app");
    for (const delivery of acrossMidnight(appId)) await archiveBatch([delivery], archive);
    const tables = localTableNames(uniqueName("replay"));
    await createProjectionTables(dynamo, tables);
    const count = async (table: string) =>
      (
        await duckDbEngine({ s3, bucket }).query(
          `SELECT count(*) AS lines, count(DISTINCT event_id) AS events FROM ${table} WHERE app = :app`,
          { app: appId },
          { edges: {} },
        )
      ).rows[0];

    // Act
    const replayed = await replayArchive(
      s3,
      archive,
      {
        stores: projectionStores(dynamo, tables),
        dataStore: archive,
        recordingJobs: { send: async () => undefined },
        now: Date.now,
      },
      archiveLease({ doc, tableName: activityTable }, Date.now),
      { appId, dryRun: true },
    );

    // Assess: four receipts of two events; the edges hold three copies (the join before
    // midnight, for the next day; the late message's two receipts, for its day).
    expect(await count("archive_events")).toEqual({ lines: 4, events: 2 });
    expect(await count("archive_edges")).toEqual({ lines: 3, events: 2 });
    // Every app's objects of the days are read (the archive's keys do not name apps), its lines kept.
    expect(replayed).toMatchObject({ events: 2, duplicates: 2 });
    expect(replayed.objects).toBeGreaterThanOrEqual(4);
  });

  it("replaces a day: a recompute with more facts rewrites it, one computed earlier is refused", async () => {
    // Prepare
    const appId = uniqueName("app");
    const events = historyOf(appId, 300, 3);
    const half = events.slice(0, 150);
    await archiveBatch(
      half.map((e, i) => queued(e, receiptOf(e, i))),
      archive,
    );
    const store = dynamoActivityStore(doc, activityTable);
    let now = Date.UTC(2026, 0, 3, 0, 30);
    const deps: RollupDependencies = {
      engine: duckDbEngine({ s3, bucket }),
      store,
      now: () => now,
      graceMs: 2 * HOUR,
    };
    await rollupDay(appId, DAYS[0] as string, deps);
    const before = await store.day(appId, DAYS[0] as string);

    // Act
    await archiveBatch(
      events.slice(150).map((e, i) => queued(e, receiptOf(e, i + 150))),
      archive,
    );
    now = Date.UTC(2026, 0, 3, 3);
    const later = await rollupDay(appId, DAYS[0] as string, deps);
    now = Date.UTC(2026, 0, 3, 1);
    const stale = await rollupDay(appId, DAYS[0] as string, deps);

    // Assess
    expect(before?.final).toBe(false);
    expect(later).toMatchObject({ outcome: "written", final: true });
    expect(stale.outcome).toBe("superseded");
    const want = expectedActivity(events, (e) => receiptOf(e, events.indexOf(e)))
      .get(appId)
      ?.get(DAYS[0] as string);
    expect((await store.day(appId, DAYS[0] as string))?.figures).toEqual(want?.figures);
    expect((await store.day(appId, DAYS[0] as string))?.computedAt).toBe(Date.UTC(2026, 0, 3, 3));
    const skipped = await rollupDay(appId, DAYS[0] as string, deps, { skipFinal: true });
    expect(skipped.outcome).toBe("skipped");
  });

  it("stores the hours of a day not over only up to the computation's: no level carried into hours not begun (#42, walk-2)", async () => {
    // Prepare: on the 3rd, one user online at 01:10, another at 02:20; the day computed at 02:30,
    // then again after its end.
    const appId = uniqueName("app");
    const online = (uid: string, h: number, m: number) => {
      const body = fixture("user_connection_status_changed");
      body.appId = appId;
      const at = Date.UTC(2026, 0, 3, h, m);
      Object.assign(body.data, { timestamp: at, status: "online" });
      Object.assign(body.data.user, { uid, status: "online" });
      body.data.currentConnection.action = "connected";
      return queued({ body: JSON.stringify(body), trigger: body.trigger, appId, at }, at + 500);
    };
    await archiveBatch([online("walk-u1", 1, 10), online("walk-u2", 2, 20)], archive);
    const store = dynamoActivityStore(doc, activityTable);
    let now = Date.UTC(2026, 0, 3, 2, 30);
    const deps: RollupDependencies = {
      engine: duckDbEngine({ s3, bucket }),
      store,
      now: () => now,
      graceMs: 2 * HOUR,
    };
    const peaks = async () =>
      (await store.hours(appId, DAYS[1] as string)).map((h) => [h.hour, h.figures.peak_online]);

    // Act
    const early = await rollupDay(appId, DAYS[1] as string, deps);
    const earlyHours = await peaks();
    now = Date.UTC(2026, 0, 4, 3);
    await rollupDay(appId, DAYS[1] as string, deps);

    // Assess: at 02:30, hours 00 to 02 (02 so far); hours 03 to 23 had not begun and are not
    // stored (they read 2 users online before). After the day's end, all 24, the level carried.
    expect(early).toMatchObject({ outcome: "written", final: false });
    expect(earlyHours).toEqual([
      [0, 0],
      [1, 1],
      [2, 2],
    ]);
    const final = await peaks();
    expect(final).toHaveLength(24);
    expect(final.slice(3).every(([, peak]) => peak === 2)).toBe(true);
    expect((await store.day(appId, DAYS[1] as string))?.figures.peak_online).toBe(2);
  });

  it("gives the same figures and day sets whatever the duplicates, order, batch splits, redrives and replays (fast-check)", async () => {
    const appId = uniqueName("app");
    // 250 events from 23:57:30 cross midnight (from 23:54 they end before it since #30's mix).
    const events = historyOf(appId, 250, 11, Date.UTC(2026, 0, 2, 23, 57, 30) / 1000);
    const expected = expectedActivity(events, (e) => receiptOf(e, events.indexOf(e))).get(appId);
    const users = expectedUsers(events, (e) => receiptOf(e, events.indexOf(e))).get(appId);
    // The history changes memberships and has conversations on both days (deletions: users-over-time).
    const sets = expectedDaySets(events, (e) => receiptOf(e, events.indexOf(e))).get(appId);
    for (const day of DAYS) {
      expect(sets?.get(day)?.conversations.length).toBeGreaterThan(0);
      expect(sets?.get(day)?.members.some((m) => m.removed)).toBe(true);
    }
    // Both days have facts, or the property compares a day of zeros with nothing and tells nothing.
    expect([...(expected?.keys() ?? [])].sort()).toEqual(DAYS);
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          // A platform retry: the same bytes again, received later (never earlier than the first).
          retries: fc.array(
            fc.record({ index: fc.nat(events.length - 1), delayMs: fc.integer({ min: 1, max: 6 * HOUR }) }),
            {
              maxLength: 40,
            },
          ),
          // An SQS redelivery or a redrive: the same message (same receipt) processed again.
          redelivered: fc.array(fc.nat(events.length - 1), { maxLength: 40 }),
          order: fc.array(fc.nat(), { minLength: events.length, maxLength: events.length }),
          batchSizes: fc.array(fc.integer({ min: 5, max: 100 }), { minLength: 1, maxLength: 8 }),
          // A batch archived again (a retried batch split differently, or a replay's resend).
          rearchived: fc.array(fc.nat(), { maxLength: 3 }),
        }),
        async ({ retries, redelivered, order, batchSizes, rearchived }) => {
          const runApp = `${appId}-r${run++}`;
          const rebody = (e: GeneratedEvent) => ({
            ...e,
            appId: runApp,
            body: e.body.replaceAll(appId, runApp),
          });
          const deliveries: QueuedEvent[] = events.map((e, i) => queued(rebody(e), receiptOf(e, i)));
          const rebodied = events.map(rebody);
          const runSets =
            expectedDaySets(rebodied, (e) => receiptOf(e, rebodied.indexOf(e))).get(runApp) ?? new Map();
          for (const r of retries) {
            const event = events[r.index] as GeneratedEvent;
            // The platform retries within its horizon: a receipt-timed fact's retry comes then.
            // A fact with a payload time may come again any time later.
            const delay = receiptTimed(event) ? 1 + (r.delayMs % PLATFORM_RETRY_HORIZON_MS) : r.delayMs;
            deliveries.push(queued(rebody(event), receiptOf(event, r.index) + delay));
          }
          for (const i of redelivered) deliveries.push(deliveries[i] as QueuedEvent);
          const shuffled = deliveries
            .map((d, i) => ({ d, k: order[i % order.length] ?? 0 }))
            .sort((a, b) => a.k - b.k)
            .map((x) => x.d);
          const batches: QueuedEvent[][] = [];
          for (let i = 0, b = 0; i < shuffled.length; b++) {
            const size = batchSizes[b % batchSizes.length] ?? 10;
            batches.push(shuffled.slice(i, i + size));
            i += size;
          }
          for (const b of rearchived) batches.push(batches[b % batches.length] as QueuedEvent[]);
          await Promise.all(batches.map((batch) => archiveBatch(batch, archive)));
          for (const day of DAYS) {
            // One query: the day's figures and its user set (users over time, #33).
            const read = await dayActivities(duckDbEngine({ s3, bucket }), day, { app: runApp, users: true });
            const got = read.activities.get(runApp) as DayActivity;
            const sets = read.daySets?.get(runApp);
            expect((sets?.users ?? []).map((u) => u.uid.replace(runApp, appId))).toEqual(
              [...(users?.get(day) ?? [])].sort(),
            );
            // The conversations with a message, members' last changes and groups deleted, to the
            // order key (its event id: the hash of this run's bytes).
            const { users: _, ...others } = sets ?? { users: [] };
            expect(others).toEqual(runSets.get(day) ?? { conversations: [], members: [], deletions: [] });
            const want = expected?.get(day);
            expect(got.figures).toEqual(want?.figures);
            expect(got.platforms).toEqual(want?.platforms);
            expect(got.hours).toEqual(want?.hours);
            expect(got.topUsers.map((u) => ({ ...u, uid: u.uid.replace(runApp, appId) }))).toEqual(
              want?.topUsers,
            );
            expect(got.topGroups.map((g) => ({ ...g, groupId: g.groupId.replace(runApp, appId) }))).toEqual(
              want?.topGroups,
            );
          }
        },
      ),
      { numRuns: 10 },
    );
  }, 600_000);
});
